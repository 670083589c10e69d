"""Karma for finished games (P3, P4) and the time-limited unlock above the threshold (P5).

The rule set says what each seat did (`ScoresSeats.seat_results`); `vollmond.community.karma`
turns that into points under the anti-farming rules; this module gathers the facts from the
store (seats, the command log, the ledger) and books the lines. A game is booked once: the
hub books before it marks a game finished, and a game resumed after a crash in between finds
its lines already there.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import structlog

from vollmond.community.karma import (
    GAME_REASONS,
    Award,
    GameFacts,
    award,
    earned_today,
    same_group_size,
)
from vollmond.engine.ruleset import AnyRuleSet, ScoresSeats
from vollmond.service.policy import Policy
from vollmond.settings.karma import KarmaSettings
from vollmond.store import (
    Sessions,
    add_grant,
    game_booked,
    get_game,
    karma_changes,
    read_commands,
    tables_shared,
)
from vollmond.store.entitlements import active_grants_each
from vollmond.store.karma import karma_since_each, karma_totals, seat_owner
from vollmond.store.owners import Owner, OwnerLike, owner_of
from vollmond.store.seats import list_seats

log = structlog.get_logger(__name__)

KARMA_UNLOCK_GRANT = "karma_unlock"
"""The grant (store.add_grant) a player holds while karma unlocks larger private rounds (P5)."""
BOT_CHANNEL = "bot"


def _utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class Booked:
    """What one finished game booked: each player's award, by account or phone identity."""

    awards: Mapping[Owner, Award]


BOOKINGS_AT_ONCE = 2  # of the pool's connections (five at rest), the rest stay for players


class KarmaBooks:
    """Books finished games and opens unlocks; every time comes from `clock`."""

    def __init__(
        self,
        sessions: Sessions,
        rules: KarmaSettings,
        policy: Policy,
        clock: Callable[[], datetime] = _utcnow,
    ) -> None:
        self.sessions = sessions
        self.rules = rules
        self.policy = policy
        self.clock = clock
        # Bookings are background work of some forty queries each. Tables that end together
        # (many games started at once) took every pooled connection, and a player's hello
        # or a command's read waited seconds behind them (issue 16, ws_load at 5,000).
        self._booking = asyncio.Semaphore(BOOKINGS_AT_ONCE)

    async def book_game(self, game_id: str, ruleset: AnyRuleSet, state: Any) -> Booked:
        """Book every human player's karma for this finished game, once: a seat with an
        account books to it, a phone-only seat to its phone identity; bots and guests
        (no ledger) and spectators (no seat) earn nothing."""
        async with self._booking:
            return await self._book_game(game_id, ruleset, state)

    async def _book_game(self, game_id: str, ruleset: AnyRuleSet, state: Any) -> Booked:
        if not isinstance(ruleset, ScoresSeats) or not ruleset.is_over(state):
            return Booked({})
        if await game_booked(self.sessions, game_id, GAME_REASONS):
            return Booked({})
        results = ruleset.seat_results(state, await self._commands(game_id, ruleset))
        game = await get_game(self.sessions, game_id)
        seated = [s for s in await list_seats(self.sessions, game_id) if s.house is not None]
        humans = [s for s in seated if s.channel != BOT_CHANNEL]
        people: dict[int, Owner] = {}
        for seat in humans:
            owner = seat_owner(seat.account_id, seat.phone_identity_id)
            if seat.house is not None and owner is not None:
                people[seat.house] = owner
        now = self.clock()
        window = now - timedelta(days=self.rules.repeat_window_days)
        group = frozenset(people.values())
        repeats = await tables_shared(
            self.sessions,
            group,
            window,
            besides=game_id,
            at_least=same_group_size(len(group), self.rules.repeat_overlap_percent),
        )
        # One query for the whole table, not one a player: 500 tables ending together had
        # their players' ledgers read one by one on the event loop.
        earned = await karma_since_each(self.sessions, group, _midnight(now), GAME_REASONS)
        awards: dict[Owner, Award] = {}
        for house, owner in people.items():
            result = results.get(house)
            if result is None:
                continue
            facts = GameFacts(
                humans=len(humans),
                private=game.private,
                same_group_games=repeats,
                earned_today=earned_today(earned.get(owner, [])),
            )
            awards[owner] = award(result, facts, self.rules)
        lines = [
            (owner, amount, reason.value)
            for owner, awarded in awards.items()
            for reason, amount in awarded.lines
        ]
        await karma_changes(self.sessions, lines, game_id=game_id, now=now)
        await self._unlock_due(list(awards))
        log.info("karma_booked", game=game_id, players=len(awards), repeats=repeats)
        return Booked(awards)

    async def _commands(self, game_id: str, ruleset: AnyRuleSet) -> list[Any]:
        commands = []
        for entry in await read_commands(self.sessions, game_id):
            data = entry.command
            raw = data.get("command") if isinstance(data, dict) else None
            if raw is not None:
                commands.append(ruleset.decode_command(raw))
        return commands

    async def unlock_if_due(self, who: OwnerLike) -> datetime | None:
        """P5: karma at or above the threshold opens larger private rounds for
        `unlock_days` days (a grant with that expiry); returns the running unlock's expiry.
        While one runs, nothing new is granted: it ends on its day, and karma above the
        threshold then (after a game, or when founding) opens the next."""
        owner = owner_of(who)
        return (await self._unlock_due([owner])).get(owner)

    async def _unlock_due(self, owners: list[Owner]) -> dict[Owner, datetime]:
        """`unlock_if_due` for several owners (a table's players): the running unlocks and the
        balances in one query each; the expiry of each owner's running or new unlock."""
        path = self.policy.karma
        if not path.enabled or not owners:
            return {}
        now = self.clock()
        running = await active_grants_each(self.sessions, owners, now, KARMA_UNLOCK_GRANT)
        until: dict[Owner, datetime] = {
            owner: max(g.expires_at for g in grants if g.expires_at is not None)
            for owner, grants in running.items()
        }
        waiting = [owner for owner in owners if owner not in until]
        totals = await karma_totals(self.sessions, waiting) if waiting else {}
        for owner in waiting:
            if totals.get(owner, 0) < path.threshold:
                continue
            until[owner] = now + timedelta(days=self.rules.unlock_days)
            await add_grant(
                self.sessions,
                owner,
                KARMA_UNLOCK_GRANT,
                reason="karma above the threshold",
                value=path.max_size,
                expires_at=until[owner],
                now=now,
            )
            log.info("karma_unlock_opened", owner=str(owner), until=until[owner].isoformat())
        return until


def _midnight(now: datetime) -> datetime:
    """The start of `now`'s day in UTC: the daily cap's day."""
    return now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
