"""What the operators allow (RULES glossary: "Spielleitung" = the service's operators).

Founders choose within these bounds. Values come from configuration, never from a founder.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

MIN_PLAYERS = 4
MAX_PLAYERS = 200
"""The operators' table sizes by default (the widest any rule set deals: public games have no
size limit of their own, P1; 200 is what one core was measured to hold, docs/decisions.md
"big public games, measured end to end"); each rule set's own bounds (`RuleSet.min_players`,
`max_players`) apply as well when a round is founded."""


@dataclass(frozen=True, slots=True)
class UnlockPath:
    """One way to found a private round larger than the default limit (P2)."""

    enabled: bool
    max_size: int


@dataclass(frozen=True, slots=True)
class CreditPath(UnlockPath):
    cost: int = 50


@dataclass(frozen=True, slots=True)
class KarmaPath(UnlockPath):
    threshold: int = 500


@dataclass(frozen=True, slots=True)
class CallBounds:
    """The operators' bounds for the founder's call settings (C8)."""

    max_duration_s: float = 600.0
    max_per_night: int = 10


@dataclass(frozen=True, slots=True)
class DurationBounds:
    """The operators' bounds for every phase duration a founder picks (W3): a zero-second
    night would spin a game through its phases; a day-long one would park a table."""

    min_s: float = 1.0
    max_s: float = 3600.0


@dataclass(frozen=True, slots=True)
class Policy:
    private_default_max: int = 9
    premium: UnlockPath = field(default_factory=lambda: UnlockPath(enabled=True, max_size=30))
    credit: CreditPath = field(default_factory=lambda: CreditPath(enabled=True, max_size=20))
    karma: KarmaPath = field(default_factory=lambda: KarmaPath(enabled=True, max_size=15))
    calls: CallBounds = field(default_factory=CallBounds)
    durations: DurationBounds = field(default_factory=DurationBounds)
    min_players: int = MIN_PLAYERS
    max_players: int = MAX_PLAYERS
    invitation_attempts_per_minute: int = 10
    login_attempts_per_minute: int = 10
    # Presence (service/presence.py): a dropped seat is kept `grace_s` seconds before phase
    # changes count as idle; after `idle_phases_before_removal` idle phases the player is
    # removed and an account loses `idle_karma_penalty` karma (0: none).
    grace_s: float = 120.0
    idle_phases_before_removal: int = 3
    idle_karma_penalty: int = 10
    # A finished game's actor stays in memory `finished_linger_s` seconds after the game's end
    # (late readers, spectators, the after-game chat), then is released; its log stays, and
    # views and history of the finished game are rebuilt from the log (service/hub.py).
    finished_linger_s: float = 60.0
    # How many finished games are kept rebuilt for readers at once (least recently read go).
    archived_games_cached: int = 8


PRIVATE_SEATS_GRANT = "private_seats"
"""A personal grant (store.add_grant) unlocking private rounds up to its value (P2)."""


@dataclass(frozen=True, slots=True)
class Standing:
    """What the founder brings: premium or a personal grant, karma, credit."""

    premium: bool
    karma: int
    credit: int
    # The largest private round a personal grant (`PRIVATE_SEATS_GRANT`) allows; 0 without one.
    granted_size: int = 0
    # P5: until when karma unlocks larger private rounds (service/karma.py); None: it does not.
    karma_unlock_until: datetime | None = None

    @property
    def karma_unlocked(self) -> bool:
        return self.karma_unlock_until is not None


class SizeNotAllowedError(ValueError):
    """A private round larger than the founder may found."""

    def __init__(self, size: int, allowed: int) -> None:
        super().__init__(f"private rounds up to {allowed} seats; asked for {size}")
        self.size = size
        self.allowed = allowed


@dataclass(frozen=True, slots=True)
class Unlock:
    """How a private round's size was allowed; `charge` is credit to book at founding."""

    path: str
    charge: int = 0


def unlock_private_size(policy: Policy, size: int, standing: Standing) -> Unlock:
    """P1/P2: up to the default size for everyone; beyond it by premium, karma, then credit
    (the free paths first, so nobody pays who need not)."""
    if size <= policy.private_default_max:
        return Unlock("default")
    if size <= standing.granted_size:
        return Unlock("grant")
    if policy.premium.enabled and standing.premium and size <= policy.premium.max_size:
        return Unlock("premium")
    if policy.karma.enabled and standing.karma_unlocked and size <= policy.karma.max_size:
        return Unlock("karma")
    if (
        policy.credit.enabled
        and standing.credit >= policy.credit.cost
        and size <= policy.credit.max_size
    ):
        return Unlock("credit", charge=policy.credit.cost)
    allowed = max(
        [policy.private_default_max, standing.granted_size]
        + [
            path.max_size
            for path, ok in (
                (policy.premium, standing.premium),
                (policy.karma, standing.karma_unlocked),
                (policy.credit, standing.credit >= policy.credit.cost),
            )
            if path.enabled and ok
        ]
    )
    raise SizeNotAllowedError(size, allowed)
