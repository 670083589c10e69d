"""Moderation in the running service: the entry check, the operator call and the effects of
warnings, mutes, kicks and aborted games on the people at the tables (issue 9, O1, O5).

The moderation core (:mod:`vollmond.moderation`) decides and stores; this module makes the
running game obey. One :class:`Enforcer` per service, built in the app's lifespan next to the
one :class:`~vollmond.moderation.Moderation`:

- :meth:`Enforcer.check` is what every entry path asks (web login and API, the WebSocket,
  founding, joining, spectating, the phone's identification and announcer); the refusal is
  told with :func:`denial_text`, reason and expiry in the person's language.
- :meth:`Enforcer.raise_alarm` is the phone's ``*9#``/``*9RNN#`` and the web button.
- :meth:`Enforcer.run` polls the store for new warnings, mutes and kicks (from the console in
  this process or from ``vollmond admin`` in another) and for games an admin aborted, and
  applies them: a warning is told to the player's connections, a kick submits the rule set's
  ``leave`` for the seat through its actor (role revealed, like leaving by oneself), an
  aborted game's actor is stopped. Polling, not a callback, because the command line is
  another process.
- :meth:`Enforcer.muted_now` answers the phone mixer from a per-person cache, never from the
  database (it is asked every 20 ms per line).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

import structlog
from sqlalchemy import func, select

from vollmond.i18n import text
from vollmond.moderation import (
    PRIVATE,
    SPECTATE,
    AlarmRateLimitedError,
    Area,
    Caller,
    Denied,
    Moderation,
    Sanction,
    SanctionKind,
    Subject,
)
from vollmond.moderation.alarms import Alarm, AlarmStatus, list_alarms
from vollmond.moderation.authority import load_staff
from vollmond.moderation.errors import SubjectNotFoundError
from vollmond.moderation.sanctions import _sanction
from vollmond.moderation.subjects import linked_subjects
from vollmond.service.actor import GameClosedError
from vollmond.service.hub import Hub
from vollmond.store.db import StoreBusyError
from vollmond.store.models import GameRow, GameStatus, SanctionRow
from vollmond.store.seats import list_seats
from vollmond.worlds import get_world, world_ids

log = structlog.get_logger(__name__)

_NOTICE_KEYS = {
    SanctionKind.WARN: "warned",
    SanctionKind.MUTE: "muted",
    SanctionKind.KICK: "kicked",
    SanctionKind.BAN: "banned",
}
NOTICE_KINDS = (SanctionKind.WARN.value, SanctionKind.MUTE.value, SanctionKind.KICK.value)


# -- who ---------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Person:
    """Whom an entry path knows: an account, a phone identity, or both (a linked caller).

    Both ids are passed when known; the core also follows the link between them."""

    account_id: int | None = None
    phone_identity_id: int | None = None

    def subjects(self) -> list[Subject]:
        found = []
        if self.account_id is not None:
            found.append(Subject.account(self.account_id))
        if self.phone_identity_id is not None:
            found.append(Subject.phone(self.phone_identity_id))
        return found

    def __bool__(self) -> bool:
        return self.account_id is not None or self.phone_identity_id is not None


# -- what they are told ------------------------------------------------------------------------
def _t(key: str, lang: str, **params: str | int) -> str:
    return text(f"moderation.enforce.{key}", lang, get_world(world_ids()[0]), **params)


def until_text(expires_at: datetime | None, lang: str) -> str:
    """ "bis 01.12.2026 um 17:30 Uhr (UTC)" / "until 2026-12-01 at 17:30 (UTC)", or permanent."""
    if expires_at is None:
        return _t("permanent", lang)
    date = expires_at.strftime("%d.%m.%Y" if lang == "de" else "%Y-%m-%d")
    return _t("until", lang, date=date, time=expires_at.strftime("%H:%M"))


def area_text(area: Area, lang: str) -> str:
    if area.world is not None:
        names = get_world(area.world).names_in(lang) if area.world in world_ids() else None
        return _t("area.world", lang, name=names.world if names else area.world)
    return _t(f"area.{area.kind.value}", lang)


def denial_text(denied: Denied, lang: str) -> str:
    """The sentence a banned person hears or sees (O5: always reason and expiry)."""
    return _t(
        "banned",
        lang,
        area=area_text(denied.area, lang),
        reason=denied.reason,
        until=until_text(denied.expires_at, lang),
    )


def notice_text(sanction: Sanction, lang: str) -> str:
    """What a warned, muted or kicked player is told."""
    until = until_text(sanction.expires_at, lang)
    return _t(_NOTICE_KEYS[sanction.kind], lang, reason=sanction.reason, until=until)


def denial_json(denied: Denied, lang: str) -> dict[str, str | int | None]:
    """The JSON error body of a refused web request."""
    return {
        "error": "banned",
        "message": denial_text(denied, lang),
        "reason": denied.reason,
        "area": str(denied.area),
        "expires_at": None if denied.expires_at is None else denied.expires_at.isoformat(),
        "sanction": denied.sanction_id,
    }


# -- whom to tell ------------------------------------------------------------------------------
class Listener(Protocol):
    """A player's connection (browser socket, phone line) that can be told something."""

    def moderation_notice(self, kind: str, message: str) -> None: ...


@dataclass(frozen=True, slots=True)
class _Watch:
    game_id: str
    house: int | None
    person: Person


@dataclass(slots=True)
class _MuteEntry:
    sanction: Sanction | None
    checked: float


@dataclass(frozen=True, slots=True)
class AlarmResult:
    """The caller's confirmation, or the refusal with the time a call is possible again."""

    ok: bool
    message: str
    retry_at: datetime | None = None


class Enforcer:
    def __init__(
        self, moderation: Moderation, hub: Hub, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.moderation = moderation
        self.hub = hub
        self.clock = clock
        self.settings = moderation.settings
        self._watches: dict[Listener, _Watch] = {}
        self._mutes: dict[Person, _MuteEntry] = {}
        self._refreshing: set[Person] = set()
        self._reading: dict[Person, asyncio.Future[None]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._last_sanction = 0
        self._ready = asyncio.Event()

    # -- entry -------------------------------------------------------------------------------
    async def check(self, person: Person, *areas: Area) -> Denied | None:
        """None if `person` may enter `areas`, else the longest ban that refuses them."""
        refusals = []
        for subject in person.subjects():
            answer = await self.moderation.access(subject, *areas)
            if isinstance(answer, Denied):
                refusals.append(answer)
        if not refusals:
            return None
        return max(refusals, key=lambda d: (d.expires_at is None, d.expires_at or datetime.min))

    async def check_game(
        self, person: Person, world: str, *, private: bool = False, spectate: bool = False
    ) -> Denied | None:
        """Founding/joining (``world:<id>``, plus ``private``) or spectating (plus
        ``spectate``) a game of `world`."""
        areas = [Area.in_world(world)]
        if private:
            areas.append(PRIVATE)
        if spectate:
            areas.append(SPECTATE)
        return await self.check(person, *areas)

    # -- the operator call -------------------------------------------------------------------
    async def raise_alarm(
        self,
        game_id: str,
        *,
        person: Person,
        house: int | None,
        reason: int | None,
        accused: int | None,
        lang: str,
    ) -> AlarmResult:
        """O1: persist the alarm with the game's round and phase; the answer is the caller's
        confirmation, or the refusal past the misuse limit with when to call again."""
        actor = self.hub.actors.get(game_id)
        state = actor.state if actor is not None else None
        round_, phase = (state.round, state.phase.value) if state is not None else (0, "lobby")
        try:
            await self.moderation.raise_alarm(
                game_id=game_id,
                round=round_,
                phase=phase,
                caller=Caller(person.account_id, person.phone_identity_id, house),
                reason=reason,
                accused_house=accused,
            )
        except AlarmRateLimitedError as exc:
            until = until_text(exc.retry_at, lang)
            return AlarmResult(False, _t("alarm_limited", lang, until=until), exc.retry_at)
        if reason is not None and accused is not None:
            message = _t("alarm_raised_about", lang, reason=reason, house=accused)
        else:
            message = _t("alarm_raised", lang)
        log.warning("operator_alarm", game=game_id, seat=house, reason=reason, accused=accused)
        return AlarmResult(True, message)

    # -- moderators on the phone (O1) ----------------------------------------------------------
    async def is_staff(self, account_id: int | None) -> bool:
        """Whether `account_id` may moderate now (moderator or admin; read from the database
        each time, so a demotion takes effect at the next alarm)."""
        if account_id is None:
            return False
        async with self.moderation.sessions() as session:
            try:
                staff = await load_staff(session, account_id, self.settings)
            except SubjectNotFoundError:
                return False
        return staff.authority.moderate

    async def may_listen(self, account_id: int | None, game_id: str) -> bool:
        """Whether `account_id` may listen to `game_id` from the console: staff holding (having
        taken, not yet resolved) an alarm of that game. They hear what a spectator hears."""
        if not await self.is_staff(account_id):
            return False
        held = await list_alarms(
            self.moderation.sessions, statuses=(AlarmStatus.TAKEN,), game_id=game_id
        )
        return any(alarm.taken_by == account_id for alarm in held)

    def duty_notice(self, alarm: Alarm, lang: str) -> str:
        """The short spoken notice a moderator on the phone hears when an alarm arrives."""
        if alarm.reason is not None and alarm.accused_house is not None:
            return _t("staff_alarm_about", lang, reason=alarm.reason, house=alarm.accused_house)
        return _t("staff_alarm", lang)

    # -- listeners -----------------------------------------------------------------------------
    def watch(self, listener: Listener, game_id: str, house: int | None, person: Person) -> None:
        """`listener` follows `game_id` (as `house`, or as a spectator) for `person`."""
        self._watches[listener] = _Watch(game_id, house, person)

    def unwatch(self, listener: Listener) -> None:
        self._watches.pop(listener, None)

    # -- mutes ---------------------------------------------------------------------------------
    def _stale(self, entry: _MuteEntry | None) -> bool:
        """Whether a cached answer must be read again.

        A mute imposed later reaches the cache through `run`'s poll (`_apply` reads the
        person again), so "not muted" stays true until the poll says otherwise and is never
        read again by time: at a table where everyone writes, reading every writer's mutes
        every `mute_refresh_s` was a stream of queries that, under load, queued for the
        store's connections until they timed out. A mute in force is read again after
        `mute_refresh_s`, so one lifted early ends within it (an expiry ends on time anyway).
        """
        if entry is None:
            return True
        return entry.sanction is not None and (
            self.clock() - entry.checked > self.settings.mute_refresh_s
        )

    def muted_now(self, person: Person) -> bool:
        """For the 20 ms paths: the cached answer; a stale one is read again in the background
        (the frame meanwhile goes by the last answer, and an expired mute ends on time)."""
        if not person:
            return False
        entry = self._mutes.get(person)
        if self._stale(entry):
            self._refresh_later(person)
        if entry is None or entry.sanction is None:
            return False
        expires = entry.sanction.expires_at
        return expires is None or expires > self.moderation.clock()

    async def mute_of(self, person: Person) -> Sanction | None:
        """For chat (one message, not a frame): the mute in force, read now if stale; one
        read per person at a time, however many of its lines arrive meanwhile."""
        if not person:
            return None
        if self._stale(self._mutes.get(person)):
            pending = self._reading.get(person)
            if pending is None:
                pending = asyncio.ensure_future(self._refresh(person))
                self._reading[person] = pending
                pending.add_done_callback(lambda _: self._reading.pop(person, None))
            await asyncio.shield(pending)
        sanction = self._mutes[person].sanction
        if sanction is None or not sanction.active(self.moderation.clock()):
            return None
        return sanction

    async def _refresh(self, person: Person) -> None:
        # Kept only if no read that began later has been kept meanwhile: a slow read from
        # before a mute must not overwrite the poll's read of it ("not muted" is never read
        # again by time, see `_stale`).
        started = self.clock()
        found: Sanction | None = None
        for subject in person.subjects():
            mute = await self.moderation.muted(subject)
            if mute is not None and (
                found is None
                or (mute.expires_at or datetime.max.replace(tzinfo=mute.created_at.tzinfo))
                > (found.expires_at or datetime.max.replace(tzinfo=found.created_at.tzinfo))
            ):
                found = mute
        kept = self._mutes.get(person)
        if kept is None or kept.checked <= started:
            self._mutes[person] = _MuteEntry(found, started)

    def _refresh_later(self, person: Person) -> None:
        if person in self._refreshing:
            return
        self._refreshing.add(person)

        async def refresh() -> None:
            try:
                await self._refresh(person)
            finally:
                self._refreshing.discard(person)

        self._spawn(refresh())

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- effects -------------------------------------------------------------------------------
    async def run(self) -> None:
        """The service's loop: apply new sanctions and aborted games, until cancelled."""
        async with self.moderation.sessions() as session:
            newest = await session.scalar(select(func.max(SanctionRow.id)))
        self._last_sanction = newest or 0
        self._ready.set()
        while True:
            try:
                await self.poll()
            except asyncio.CancelledError:
                raise
            except StoreBusyError:  # overload, not a fault: no traceback to build every poll
                log.warning("enforce_poll_store_busy")
            except Exception:
                log.exception("enforce_poll_failed")
            await asyncio.sleep(self.settings.enforce_poll_s)

    async def ready(self) -> None:
        await self._ready.wait()

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def poll(self) -> None:
        """One look at the store: new warnings, mutes and kicks; aborted running games."""
        async with self.moderation.sessions() as session:
            rows = list(
                await session.scalars(
                    select(SanctionRow)
                    .where(SanctionRow.id > self._last_sanction)
                    .order_by(SanctionRow.id)
                )
            )
            people = {}
            for row in rows:
                sanction = _sanction(row)
                try:
                    linked = await linked_subjects(session, sanction.subject)
                except LookupError:
                    continue
                people[row.id] = (sanction, linked.account_id, set(linked.phone_identity_ids))
        for row in rows:
            self._last_sanction = max(self._last_sanction, row.id)
            if row.kind in NOTICE_KINDS and row.id in people:
                sanction, account_id, phones = people[row.id]
                await self._apply(sanction, account_id, phones)
        await self._abort_games()

    def _matches(self, watch: _Watch, account_id: int | None, phones: set[int]) -> bool:
        person = watch.person
        return (account_id is not None and person.account_id == account_id) or (
            person.phone_identity_id is not None and person.phone_identity_id in phones
        )

    async def _apply(self, sanction: Sanction, account_id: int | None, phones: set[int]) -> None:
        targets = [
            (listener, watch)
            for listener, watch in list(self._watches.items())
            if self._matches(watch, account_id, phones)
            and (sanction.game_id is None or watch.game_id == sanction.game_id)
        ]
        if sanction.kind is SanctionKind.MUTE:
            for person in [
                p for p in self._mutes if self._matches(_Watch("", None, p), account_id, phones)
            ]:
                await self._refresh(person)
            for _, watch in targets:
                await self._refresh(watch.person)
        for listener, _ in targets:
            lang = getattr(listener, "lang", "de")
            listener.moderation_notice(sanction.kind.value, notice_text(sanction, lang))
        if sanction.kind is SanctionKind.KICK and sanction.game_id is not None:
            await self._kick(sanction.game_id, account_id, targets)
        log.info(
            "sanction_applied", sanction=sanction.id, kind=sanction.kind.value, told=len(targets)
        )

    async def _kick(
        self, game_id: str, account_id: int | None, targets: list[tuple[Listener, _Watch]]
    ) -> None:
        """The seat leaves like ``Leave`` (its role is revealed), through the game's actor
        (where games are sharded, a mirror's `submit` hands it to the owner)."""
        actor = await self.hub.running_actor(game_id)
        if actor is None or actor.state is None:
            return
        houses = {w.house for _, w in targets if w.house is not None}
        if account_id is not None:
            houses |= {
                s.house
                for s in await list_seats(self.hub.sessions, game_id)
                if s.account_id == account_id and s.house is not None
            }
        for house in sorted(houses):
            if not actor.state.has_seat(house) or not actor.state.player(house).alive:
                continue
            with contextlib.suppress(GameClosedError):
                await actor.submit(actor.ruleset.leave(house))
            log.info("seat_kicked", game=game_id, house=house)

    async def _abort_games(self) -> None:
        """Running games an admin aborted (``vollmond admin abort-game``): stop their actors
        and tell everyone at the table."""
        running = [
            game_id
            for game_id, actor in self.hub.followed_games().items()
            if actor.state is not None and not actor.ruleset.is_over(actor.state)
        ]
        if not running:
            return
        async with self.moderation.sessions() as session:
            aborted = set(
                await session.scalars(
                    select(GameRow.id).where(
                        GameRow.id.in_(running), GameRow.status == GameStatus.ABORTED.value
                    )
                )
            )
        for game_id in sorted(aborted):
            for listener, watch in list(self._watches.items()):
                if watch.game_id == game_id:
                    lang = getattr(listener, "lang", "de")
                    listener.moderation_notice("game_aborted", _t("game_aborted", lang))
            await self.hub.stop_aborted(game_id)
            log.warning("game_aborted_by_admin", game=game_id)
