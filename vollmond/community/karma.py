"""How many karma points one finished game is worth to one player (P3, P4), as a pure
function of what happened, so every rule and number is tested without a database.

The service gathers the facts (`SeatResult` from the rule set, `GameFacts` from the seats and
the ledger) and books the `Award` lines to the append-only karma ledger, one line per reason,
so a player's history says why (docs/community.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from vollmond.engine.ruleset import SeatResult
from vollmond.settings.karma import KarmaSettings


class KarmaReason(StrEnum):
    """The ledger's reason codes for a game's karma; the catalogues name them (karma.*)."""

    WIN = "game_won"
    SURVIVE = "game_survived"
    SPECIAL_ROLE = "game_special_role"
    VOTES = "game_votes"
    STAY = "game_stayed"
    LEAVE = "game_left"


"""However the service names a player with a ledger (an account or a phone identity)."""

GAME_REASONS = frozenset(reason.value for reason in KarmaReason)
"""Every reason a finished game books: a game is booked once (the service checks these)."""


@dataclass(frozen=True, slots=True)
class GameFacts:
    """What the anti-farming rules (P4) need to know about the game and the player."""

    humans: int
    private: bool
    same_group_games: int
    """Earlier finished games in the window played by (nearly) the same humans."""
    earned_today: int
    """Points this player has already earned from games today (before this one)."""


@dataclass(frozen=True, slots=True)
class Award:
    """The ledger lines of one player for one game; `lines` hold no zero amounts."""

    lines: tuple[tuple[KarmaReason, int], ...]

    @property
    def total(self) -> int:
        return sum(amount for _, amount in self.lines)


def award(result: SeatResult, facts: GameFacts, rules: KarmaSettings) -> Award:
    """The karma lines of one player for one finished game.

    A leaver loses `rules.leave` and earns nothing else. Otherwise the earned points are
    weighted (private round, same group again) and cut to what is left of the daily cap;
    the cut falls on the last reasons first, so the history still adds up.
    """
    if result.left:
        return Award(((KarmaReason.LEAVE, -rules.leave),) if rules.leave else ())
    if facts.humans < rules.min_humans:
        return Award(())
    earned = [
        (KarmaReason.WIN, rules.win if result.won else 0),
        (KarmaReason.SURVIVE, rules.survive if result.survived else 0),
        (KarmaReason.SPECIAL_ROLE, rules.special_role if result.special_role else 0),
        (KarmaReason.VOTES, rules.per_vote * min(result.votes, rules.max_votes_counted)),
        (KarmaReason.STAY, rules.stay_to_end),
    ]
    weighted = [(reason, _weigh(points, facts, rules)) for reason, points in earned]
    room = max(0, rules.daily_cap - facts.earned_today)
    return Award(tuple(_within(weighted, room)))


def _weigh(points: int, facts: GameFacts, rules: KarmaSettings) -> int:
    if facts.private:
        points = points * rules.private_percent // 100
    return points >> min(facts.same_group_games, 31)


def _within(
    lines: Iterable[tuple[KarmaReason, int]], room: int
) -> Iterable[tuple[KarmaReason, int]]:
    for reason, points in lines:
        granted = min(points, room)
        room -= granted
        if granted:
            yield reason, granted


def same_group_size(humans: int, percent: int) -> int:
    """How many of a game's `humans` must have sat at an earlier table together for that
    table to count as the same group again: at least `percent` of them (rounded up), and
    never fewer than two, as one player is no group. A group of friends playing together
    again and again earns less each time (P4); a new mix of players earns in full. The
    store counts such tables (`store.karma.tables_shared`)."""
    return max(-(-humans * percent // 100), 2)


def earned_today(amounts: Sequence[int]) -> int:
    """Points already earned from games today: only what was earned counts against the cap."""
    return sum(amount for amount in amounts if amount > 0)
