"""Gives his day's vote to another, who votes double (S15)."""

from __future__ import annotations

from vollmond.engine.standard.abilities.day import TransferVote
from vollmond.engine.standard.roles.base import RoleSpec
from vollmond.engine.standard.types import RoleId, Team

ROLE = RoleSpec(
    id=RoleId.VOTE_GIVER,
    team=Team.VILLAGE,
    abilities=(TransferVote(),),
)
