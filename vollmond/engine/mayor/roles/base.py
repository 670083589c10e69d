"""A role of the mayor rule set as data: its id, its team, whether it sits in the night room.

Seed 000 names no night roles besides the evil team, so a role is small; the rules ask these
properties and never compare role ids.
"""

from __future__ import annotations

from dataclasses import dataclass

from vollmond.engine.mayor.types import Team


@dataclass(frozen=True, slots=True)
class RoleSpec:
    id: str
    team: Team
    night_room: bool = False
