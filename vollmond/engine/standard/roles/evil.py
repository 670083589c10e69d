"""The evil team: meets in the night room, votes the night's victim (N1-N6)."""

from __future__ import annotations

from vollmond.engine.standard.abilities.day import InstantKill
from vollmond.engine.standard.abilities.night import EvilVote
from vollmond.engine.standard.roles.base import RoleSpec
from vollmond.engine.standard.types import RoleId, Team

ROLE = RoleSpec(
    id=RoleId.EVIL,
    team=Team.EVIL,
    night_room=True,
    seen_as_evil=True,
    counts_for_evil_majority=True,
    abilities=(EvilVote(), InstantKill()),
)
