"""Read-only questions about a state that many rules ask (who is in the night room, ...).

Every answer comes from the role spec a player holds (`Player.spec`, read directly here: these
questions are asked at every step), never from the role registry: abilities ask these
questions, and the registry is built from abilities, so this module must stay below both (no
import cycle; `queries` adds the registry on top).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vollmond.engine.standard.state import GameState, Player
from vollmond.engine.standard.types import NightStep, Phase, Team, Trait

if TYPE_CHECKING:
    from vollmond.engine.standard.roles.base import RoleSpec


def spec_of(player: Player) -> RoleSpec:
    return player.spec


def in_night_room(player: Player) -> bool:
    return player.spec.night_room


def night_room(state: GameState, *, living_only: bool = True) -> frozenset[int]:
    """Seats of the evil team that meets at night (N1); the defector is not among them."""
    return frozenset(
        p.seat for p in state.players if p.spec.night_room and (p.alive or not living_only)
    )


def bonds_known(state: GameState) -> bool:
    """Teams and twins know each other, except in a night step before the main one: the
    steal step (S14) wakes the vagabond before anyone else, so a robbed player never learns
    who his former team was (abilities/steal.py, `hides_bonds`)."""
    return state.night is None or state.night.step is NightStep.MAIN


def seen_as_evil(player: Player) -> bool:
    return player.spec.seen_as_evil


def on_team(player: Player, team: Team) -> bool:
    return player.spec.team is team


def has_trait(player: Player, trait: Trait) -> bool:
    return trait in player.spec.traits


def bonded_partners(state: GameState, player: Player) -> frozenset[int]:
    """Twins (S10) and lovers (S11) who know each other and die together."""
    partners: set[int] = set()
    if has_trait(player, Trait.BONDED_PAIR):
        partners |= {
            p.seat
            for p in state.players
            if p.seat != player.seat and p.role is player.role and has_trait(p, Trait.BONDED_PAIR)
        }
    if player.lover:
        partners |= {p.seat for p in state.players if p.lover and p.seat != player.seat}
    return frozenset(partners)


def is_day_time(state: GameState) -> bool:
    return state.phase in (Phase.MORNING, Phase.DAY, Phase.VOTE)


def alive(state: GameState, seat: int) -> bool:
    return state.has_seat(seat) and state.player(seat).alive
