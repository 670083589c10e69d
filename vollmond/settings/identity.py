"""How a caller proves who they are (docs/security.md, DESIGN.md §7 "Identity")."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class IdentitySettings:
    """PIN lockouts and number verification."""
