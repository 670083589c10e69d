"""Protects anyone, herself included, never twice in a row (S2)."""

from __future__ import annotations

from vollmond.engine.standard.abilities.night import Protect
from vollmond.engine.standard.roles.base import RoleSpec
from vollmond.engine.standard.types import RoleId, Team

ROLE = RoleSpec(
    id=RoleId.DOCTOR,
    team=Team.VILLAGE,
    abilities=(Protect(allow_self=True),),
)
