"""What the operators decide about karma (RULES P3–P5, docs/community.md).

One table `[karma]` of the operator's settings file. Every number a player's karma depends on
is here; the deductions for sanctions and false alarms are in `[moderation]` (they are booked
through the same ledger).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class KarmaSettings:
    """Points for a finished game (P3), the anti-farming limits (P4) and the unlock (P5)."""

    # P3: points a human player earns at the end of a game.
    win: int = 10
    survive: int = 5
    special_role: int = 3
    per_vote: int = 1
    max_votes_counted: int = 10
    stay_to_end: int = 5
    # P3: taken from a player who left a running game (the idle removal has its own number,
    # `[policy] idle_karma_penalty`, booked once per removal).
    leave: int = 15
    # P4: at most this many points a day (UTC) from games; deductions are never capped.
    daily_cap: int = 60
    # P4: no points from a game with fewer human players (bots and spectators do not count).
    min_humans: int = 5
    # P4: a private round's points are weighted by this percentage.
    private_percent: int = 50
    # P4: the same group again: a game counts as "the same group" when at least this share
    # (percent) of its human players played an earlier finished game together within
    # `repeat_window_days`; each such earlier game halves the points.
    repeat_overlap_percent: int = 80
    repeat_window_days: int = 7
    # P5: karma at or above the karma path's threshold (`[policy.karma] threshold`) unlocks
    # larger private rounds (up to `[policy.karma] max_size`) for `unlock_days` days; playing
    # or founding again above the threshold opens the next unlock (service/karma.py).
    unlock_days: int = 7

    def __post_init__(self) -> None:
        for name in (
            "win",
            "survive",
            "special_role",
            "per_vote",
            "max_votes_counted",
            "stay_to_end",
            "leave",
            "daily_cap",
            "min_humans",
            "repeat_window_days",
            "unlock_days",
        ):
            if getattr(self, name) < 0:
                raise ValueError(f"karma.{name} must not be negative")
        for name in ("private_percent", "repeat_overlap_percent"):
            if not 0 <= getattr(self, name) <= 100:
                raise ValueError(f"karma.{name} must be 0..100")
