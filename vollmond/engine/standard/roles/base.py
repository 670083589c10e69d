"""The role interface: a role is data plus the abilities it is built from.

Every rule consults role *properties* (team, night room, how the seer sees it, traits,
abilities); no rule compares role names.
"""

from __future__ import annotations

from dataclasses import dataclass

from vollmond.engine.standard.abilities.base import Ability
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

    def initial_memory(self, players: int) -> dict[str, int]:
        """The charges and marks a fresh holder of this role starts with."""
        memory: dict[str, int] = {}
        for ability in self.abilities:
            memory.update(ability.initial_memory(players))
        return memory

    def __deepcopy__(self, memo: dict[int, object]) -> RoleSpec:
        # A constant of the rule set, shared by every game: copying a state copies the
        # reference, so a copied state still equals the original.
        return self
