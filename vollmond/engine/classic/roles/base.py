"""The role interface: a card is data plus the abilities it is built from. Every rule asks
these properties; no rule compares role names."""

from __future__ import annotations

from dataclasses import dataclass

from vollmond.engine.classic.abilities import Ability
from vollmond.engine.classic.types import Kind, Role, Team


@dataclass(frozen=True, slots=True)
class RoleSpec:
    """- `wolf`: a werewolf card (A1's "wolves", the thief must take it, A3);
    - `wakes_with_wolves`: sits in the wolves' room and votes the victim (the false wolf, A10);
    - `seen_as_wolf`: the seer's thumb down (the black werewolf is not, A13);
    - `learns_wolves`: told the werewolves in the first night (the pact maker, A12);
    - `wins_if_banished`: the death-seeker (A14)."""

    id: Role
    team: Team
    wolf: bool = False
    wakes_with_wolves: bool = False
    seen_as_wolf: bool = False
    learns_wolves: bool = False
    wins_if_banished: bool = False
    abilities: tuple[Ability, ...] = ()

    def ability(self, kind: Kind) -> Ability | None:
        return next((a for a in self.abilities if a.kind is kind), None)

    def __deepcopy__(self, memo: dict[int, object]) -> RoleSpec:
        # A constant of the rule set shared by every game (see standard.roles.base).
        return self
