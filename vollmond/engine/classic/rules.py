"""The classic rule set's entry points: found a game, apply a command.

>>> import random
>>> from vollmond.engine.classic.options import ClassicOptions
>>> result = new_game(ClassicOptions(players=8), random.Random(1))
>>> result.state.phase.value, len(result.state.players)
('night', 8)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from vollmond.engine.classic import day
from vollmond.engine.classic.abilities import reject
from vollmond.engine.classic.codes import Ev, Rej
from vollmond.engine.classic.commands import (
    Act,
    BreakTie,
    Command,
    Elect,
    Leave,
    NameSuccessor,
    PhaseTimeout,
    TimerCommand,
    Vote,
)
from vollmond.engine.classic.decks import InvalidOptionsError, build_deck
from vollmond.engine.classic.options import ClassicOptions
from vollmond.engine.classic.roles.registry import ROLES
from vollmond.engine.classic.stages import advance_if_complete, begin, end_stage
from vollmond.engine.classic.state import GameState, Player
from vollmond.engine.classic.tx import Tx
from vollmond.engine.classic.types import Phase, Role
from vollmond.engine.classic.victory import settle
from vollmond.engine.core import Audience, Rejection, Result, Rng
from vollmond.engine.kit.handlers import Handler, HandlerTable, Refusals

ClassicResult = Result[GameState, TimerCommand]

__all__ = ["ClassicResult", "InvalidOptionsError", "apply", "new_game", "start_with_roles"]


def new_game(options: ClassicOptions, rng: Rng) -> ClassicResult:
    """Shuffle the hat and deal (an event, so replay never re-rolls), then open the game."""
    cards = build_deck(options.deck, options.players, options.custom_roles)
    rng.shuffle(cards)
    return start_with_roles(
        options, tuple(cards[: options.players]), tuple(cards[options.players :]), rng
    )


def start_with_roles(
    options: ClassicOptions, roles: Sequence[Role], leftover: Sequence[Role], rng: Rng
) -> ClassicResult:
    """Open a game with a given deal (seat i gets roles[i-1]; the thief's two cards left
    over): scenarios and golden games."""
    if len(roles) != options.players:
        raise InvalidOptionsError("one card per seat")
    players = tuple(Player(seat, ROLES[role]) for seat, role in enumerate(roles, start=1))
    hat = (*roles, *leftover)
    state = GameState(
        options,
        players,
        Phase.NIGHT,
        leftover=tuple(ROLES[r] for r in leftover),
        deck=frozenset(hat),
    )
    tx = Tx(state, rng)
    tx.emit(
        Ev.GAME_STARTED,
        Audience.public(),
        world=options.world,
        players=options.players,
        deck=options.deck.value,
        composition=dict(sorted(Counter(r.value for r in hat).items())),
        captain=options.captain,
    )
    tx.emit(
        Ev.ROLES_DEALT,
        Audience.system(),
        roles={str(p.seat): p.role.value for p in players},
        leftover=[r.value for r in leftover],
    )
    for player in players:
        tx.emit(Ev.ROLE_ASSIGNED, Audience.to(player.seat), role=player.role.value)
    if not settle(tx):
        begin(tx)
    return tx.result()


# --- commands ------------------------------------------------------------------------------


def _check_act(state: GameState, cmd: Act) -> Rejection | None:
    actor = state.player(cmd.actor)
    ability = actor.spec.ability(cmd.kind)
    if ability is None:
        return reject(Rej.NO_SUCH_ABILITY, kind=cmd.kind.value)
    return ability.check(state, actor, cmd.target, cmd.second)


def _act(tx: Tx, cmd: Act) -> None:
    actor = tx.state.player(cmd.actor)
    ability = actor.spec.ability(cmd.kind)
    assert ability is not None
    ability.perform(tx, actor, cmd.target, cmd.second)


def _check_timeout(state: GameState, cmd: PhaseTimeout) -> Rejection | None:
    return None if cmd.phase_seq == state.phase_seq else reject(Rej.STALE_TIMER)


def _timeout(tx: Tx, cmd: PhaseTimeout) -> None:
    end_stage(tx)


_HANDLERS: dict[type, Handler[GameState, Tx]] = {
    Act: Handler(_check_act, _act),
    Elect: Handler(day.check_elect, day.elect),
    Vote: Handler(day.check_vote, day.vote),
    BreakTie: Handler(day.check_break_tie, day.break_tie),
    NameSuccessor: Handler(day.check_name_successor, day.name_successor, needs_living_actor=False),
    Leave: Handler(day.check_leave, day.leave),
    PhaseTimeout: Handler(_check_timeout, _timeout, timer=True),
}


def _after(tx: Tx) -> None:
    """The flow after every accepted command (boardgame.io's flow after a move): settle
    victory, else end the stage if nobody is left to wait for."""
    if not settle(tx):
        advance_if_complete(tx)


_TABLE = HandlerTable(
    _HANDLERS,
    Refusals(Rej.NOT_A_PLAYER, Rej.GAME_OVER, Rej.ACTOR_DEAD),
    is_over=lambda state: state.phase is Phase.OVER,
    open_tx=Tx,
    after=_after,
)


def validate(state: GameState, command: Command) -> Rejection | None:
    """Why `command` would be refused now, or None if `apply` would accept it."""
    return _TABLE.validate(state, command)


def apply(state: GameState, command: Command, rng: Rng) -> ClassicResult | Rejection:
    """Validate, then change: a rejection leaves `state` exactly as it was."""
    tx = _TABLE.run(state, command, rng)
    return tx if isinstance(tx, Rejection) else tx.result()
