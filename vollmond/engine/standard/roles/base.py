"""The role interface: a role is data plus the abilities it is built from.

Every rule consults role *properties* (team, night room, how the seer sees it, traits,
abilities); no rule compares role names.
"""

from __future__ import annotations

from dataclasses import dataclass

from vollmond.engine.standard.abilities.base import Ability
from vollmond.engine.standard.state import RoleState
from vollmond.engine.standard.types import ActionKind, RoleId, Team, Trait


@dataclass(frozen=True, slots=True)
class RoleSpec:
    id: RoleId
    team: Team
    night_room: bool = False
    seen_as_evil: bool = False
    counts_for_evil_majority: bool = False
    abilities: tuple[Ability, ...] = ()
    traits: frozenset[Trait] = frozenset()

    def ability(self, kind: ActionKind) -> Ability | None:
        for ability in self.abilities:
            if ability.kind is kind:
                return ability
        return None

    def has(self, trait: Trait) -> bool:
        return trait in self.traits

    def initial_state(self, players: int) -> RoleState:
        """The charges a fresh holder of this role starts with."""
        state = RoleState()
        for ability in self.abilities:
            state = ability.initial_state(state, players)
        return state

    def __deepcopy__(self, memo: dict[int, object]) -> RoleSpec:
        # A constant of the rule set, shared by every game: copying a state copies the
        # reference, so a copied state still equals the original.
        return self
