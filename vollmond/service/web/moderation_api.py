"""The moderation console's JSON API (`/api/mod/...`) and its live alarm feed (`/ws/mod`).

Every call reads the caller's role from the store (`load_staff`), so a demotion takes effect
at the next click, and the page is never trusted: a player gets `403 not_staff` on every
route. What a moderator may not do is refused by the core (:mod:`vollmond.moderation`), which
also writes the audit log; this module only maps the core's refusals to JSON errors with a
code the page can explain (`ban_too_long`, `area_reserved`, `not_permitted`, ...).

Recordings (O3) are handed to the core even when a moderator asks, so that the refusal is
audited there (`recording.play.refused`); only an admin's request yields audio. The operator
view of a game is the engine's projection for `Viewer.operator()`: public information only,
never a living player's role.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import io
import wave
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol
from urllib.parse import urlsplit

import structlog
from sqlalchemy import select
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.websockets import WebSocket, WebSocketDisconnect

from vollmond.engine.core import Viewer
from vollmond.moderation import (
    Alarm,
    AlarmNotFoundError,
    AlarmStateError,
    AlarmStatus,
    Area,
    AreaReservedError,
    BanTooLongError,
    InvalidAreaError,
    InvalidSanctionError,
    Moderation,
    ModerationError,
    NotPermittedError,
    RecordingDamagedError,
    RecordingDeletedError,
    RecordingNotFoundError,
    Sanction,
    SanctionKind,
    SanctionNotFoundError,
    Subject,
    SubjectKind,
    SubjectNotFoundError,
    VaultKeyError,
    administration,
    recordings,
)
from vollmond.moderation.alarms import list_alarms
from vollmond.moderation.audit import AuditEntry, audit_log
from vollmond.moderation.authority import Staff, load_staff
from vollmond.moderation.recordings import Recording
from vollmond.moderation.sanctions import list_sanctions
from vollmond.moderation.vault import SAMPLE_BYTES, SAMPLE_RATE
from vollmond.service.hub import Hub, TableInfo
from vollmond.service.shards.stats import NodeStats
from vollmond.service.web.auth import Sessions
from vollmond.service.web.edge import ApiError, read_json
from vollmond.service.web.moderation_schema import (
    GrantBody,
    HoldBody,
    ResolveBody,
    RoleBody,
    SanctionBody,
)
from vollmond.store import (
    GameStatus,
    active_grants,
    credit_balance,
    credit_history,
    get_account,
    karma_history,
    karma_total,
    list_games,
    premium_until,
)
from vollmond.store.errors import AccountNotFoundError, GameNotFoundError
from vollmond.store.leases import Lease, NodeLeases, lease_overview
from vollmond.store.models import AccountRow, PhoneIdentityRow

log = structlog.get_logger(__name__)

Handler = Callable[[Request], Awaitable[Response]]
#: Close code of a console socket refused for want of a staff role (4000+: application).
CLOSE_NOT_STAFF = 4403
SEARCH_LIMIT = 20


class Guard(Protocol):
    def __call__(self, handler: Handler, *, csrf: bool = True) -> Handler: ...


@dataclass(frozen=True, slots=True)
class Refusal:
    status: int
    code: str


# The core's refusals as the page sees them; looked up along the exception's MRO, so the
# most specific entry wins (BanTooLongError before NotPermittedError).
REFUSALS: Mapping[type[Exception], Refusal] = {
    BanTooLongError: Refusal(403, "ban_too_long"),
    AreaReservedError: Refusal(403, "area_reserved"),
    NotPermittedError: Refusal(403, "not_permitted"),
    AlarmNotFoundError: Refusal(404, "no_such_alarm"),
    SanctionNotFoundError: Refusal(404, "no_such_sanction"),
    RecordingDeletedError: Refusal(410, "recording_deleted"),
    RecordingNotFoundError: Refusal(404, "no_such_recording"),
    SubjectNotFoundError: Refusal(404, "no_such_person"),
    AccountNotFoundError: Refusal(404, "no_such_person"),
    GameNotFoundError: Refusal(404, "no_such_game"),
    AlarmStateError: Refusal(409, "alarm_state"),
    InvalidSanctionError: Refusal(400, "invalid_sanction"),
    InvalidAreaError: Refusal(400, "invalid_area"),
    RecordingDamagedError: Refusal(500, "recording_damaged"),
    VaultKeyError: Refusal(503, "vault_key"),
    ValueError: Refusal(400, "invalid_request"),
}


def refusal_of(exc: Exception) -> Refusal | None:
    for kind in type(exc).__mro__:
        found = REFUSALS.get(kind)
        if found is not None:
            return found
    return None


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


def alarm_json(alarm: Alarm) -> dict[str, Any]:
    return {
        "id": alarm.id,
        "game_id": alarm.game_id,
        "conference": alarm.conference,  # the room of an alarm from a conference room (X2)
        "round": alarm.round,
        "phase": alarm.phase,
        "caller": {
            "account": alarm.caller.account_id,
            "phone": alarm.caller.phone_identity_id,
            "house": alarm.caller.house,
        },
        "reason": alarm.reason,
        "accused_house": alarm.accused_house,
        "created_at": _iso(alarm.created_at),
        "status": alarm.status.value,
        "taken_by": alarm.taken_by,
        "outcome": None if alarm.outcome is None else alarm.outcome.value,
        "note": alarm.note,
        "resolved_by": alarm.resolved_by,
        "resolved_at": _iso(alarm.resolved_at),
    }


def sanction_json(sanction: Sanction, now: datetime) -> dict[str, Any]:
    return {
        "id": sanction.id,
        "kind": sanction.kind.value,
        "area": None if sanction.area is None else str(sanction.area),
        "subject": {"kind": sanction.subject.kind.value, "id": sanction.subject.id},
        "game_id": sanction.game_id,
        "alarm_id": sanction.alarm_id,
        "reason": sanction.reason,
        "created_by": sanction.created_by,
        "created_at": _iso(sanction.created_at),
        "expires_at": _iso(sanction.expires_at),
        "lifted_at": _iso(sanction.lifted_at),
        "lifted_by": sanction.lifted_by,
        "active": sanction.active(now),
    }


def recording_json(recording: Recording) -> dict[str, Any]:
    return {
        "id": recording.id,
        "game_id": recording.game_id,
        "alarm_id": recording.alarm_id,
        "room": recording.room,
        "started_at": _iso(recording.started_at),
        "ended_at": _iso(recording.ended_at),
        "hold_reason": recording.hold_reason,
        "held_at": _iso(recording.held_at),
        "deleted_at": _iso(recording.deleted_at),
    }


def audit_json(entry: AuditEntry) -> dict[str, Any]:
    return {
        "id": entry.id,
        "actor": entry.actor_account_id,
        "action": entry.action,
        "target_kind": entry.target_kind,
        "target_id": entry.target_id,
        "detail": entry.detail,
        "created_at": _iso(entry.created_at),
    }


def node_stats_json(stats: NodeStats) -> dict[str, Any]:
    """The answering node as its `/metrics` shows it (shards/stats.py)."""
    counters = None if stats.leases is None else dataclasses.asdict(stats.leases)
    return {
        "node": stats.node,
        "ownership": stats.ownership,
        "games_owned": stats.games_owned,
        "games_mirrored": stats.games_mirrored,
        "leases_held": stats.leases_held,
        "next_expiry_s": stats.next_expiry_s,
        "counters": counters,
        "relay": None if stats.relay is None else dataclasses.asdict(stats.relay),
    }


def node_leases_json(node: NodeLeases, here: str | None) -> dict[str, Any]:
    return {
        "node": node.node,
        "this": node.node == here,
        "live": node.live,
        "expired": node.expired,
        "next_expiry": _iso(node.next_expiry),
        "last_renewal": _iso(node.last_renewal),
    }


def lease_json(lease: Lease, now: datetime) -> dict[str, Any]:
    return {
        "game": lease.game_id,
        "node": lease.owner,
        "epoch": lease.epoch,
        "expires_at": _iso(lease.expires_at),
        "expires_in_s": round((lease.expires_at - now).total_seconds(), 1),
        "live": lease.live(now),
    }


def wav_bytes(pcm: bytes) -> bytes:
    """The recording's 8 kHz 16-bit mono PCM in a WAV container the <audio> element plays."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(SAMPLE_BYTES)
        wav.setframerate(SAMPLE_RATE)
        wav.writeframes(pcm)
    return buffer.getvalue()


def same_origin(conn: HTTPConnection) -> bool:
    """A browser's WebSocket carries the page's Origin: a console socket opened by a page of
    another site is refused (the cookie is SameSite=Strict already; this is the second lock)."""
    origin = conn.headers.get("origin")
    if origin is None:
        return True  # not a browser; the session cookie still decides
    return urlsplit(origin).netloc == conn.headers.get("host", "")


class ModerationApi:
    """The console's routes; state lives in the store and in `Moderation`, never here."""

    def __init__(
        self, hub: Hub, sessions: Sessions, moderation: Moderation, max_body_bytes: int
    ) -> None:
        self.hub = hub
        self.sessions = sessions
        self.moderation = moderation
        self.max_body_bytes = max_body_bytes

    def routes(self, guard: Guard) -> list[Route]:
        def r(handler: Handler, *, csrf: bool = True) -> Handler:
            return guard(self._mapped(handler), csrf=csrf)

        return [
            Route("/api/mod/me", r(self.me, csrf=False)),
            Route("/api/mod/alarms", r(self.alarms, csrf=False)),
            Route("/api/mod/alarms/{alarm_id:int}/take", r(self.take), methods=["POST"]),
            Route("/api/mod/alarms/{alarm_id:int}/resolve", r(self.resolve), methods=["POST"]),
            Route("/api/mod/games", r(self.games, csrf=False)),
            Route("/api/mod/games/{game_id}", r(self.game, csrf=False)),
            Route("/api/mod/sanctions", r(self.impose), methods=["POST"]),
            Route("/api/mod/sanctions/{sanction_id:int}/lift", r(self.lift), methods=["POST"]),
            Route("/api/mod/bans", r(self.bans, csrf=False)),
            Route("/api/mod/accounts", r(self.search_accounts, csrf=False)),
            Route("/api/mod/accounts/{account_id:int}", r(self.account, csrf=False)),
            Route("/api/mod/accounts/{account_id:int}/role", r(self.role), methods=["POST"]),
            Route("/api/mod/accounts/{account_id:int}/grants", r(self.grant), methods=["POST"]),
            Route("/api/mod/recordings", r(self.recordings, csrf=False)),
            Route("/api/mod/recordings/{recording_id}/audio", r(self.audio, csrf=False)),
            Route("/api/mod/recordings/{recording_id}/chat", r(self.chat, csrf=False)),
            Route("/api/mod/recordings/{recording_id}/hold", r(self.hold), methods=["POST"]),
            Route("/api/mod/recordings/{recording_id}/release", r(self.release), methods=["POST"]),
            Route("/api/mod/recordings/{recording_id}/delete", r(self.delete), methods=["POST"]),
            Route("/api/mod/audit", r(self.audit, csrf=False)),
            Route("/api/mod/nodes", r(self.nodes, csrf=False)),
        ]

    def _mapped(self, handler: Handler) -> Handler:
        """The core's refusals as JSON errors (the shared guard knows only the lobby's)."""

        async def mapped(request: Request) -> Response:
            try:
                return await handler(request)
            except (ModerationError, AccountNotFoundError, GameNotFoundError, ValueError) as exc:
                refusal = refusal_of(exc)
                if refusal is None:
                    raise
                return JSONResponse(
                    {"error": refusal.code, "message": str(exc)}, status_code=refusal.status
                )

        return mapped

    # -- who is asking ---------------------------------------------------------------------
    async def _staff_of(self, account_id: int | None) -> Staff | None:
        if account_id is None:
            return None
        async with self.hub.sessions() as session:
            try:
                return await load_staff(session, account_id, self.moderation.settings)
            except SubjectNotFoundError:
                return None

    async def _staff(self, request: HTTPConnection) -> Staff:
        """The signed-in moderator or admin, read from the store for THIS request."""
        account_id = self.sessions.account_id(request)
        if account_id is None:
            raise ApiError(401, "login_required", "please sign in")
        staff = await self._staff_of(account_id)
        if staff is None or not staff.authority.moderate:
            raise ApiError(403, "not_staff", "only moderators and admins")
        return staff

    async def _admin(self, request: Request) -> Staff:
        staff = await self._staff(request)
        if not staff.authority.administer:
            raise ApiError(403, "not_permitted", "only admins")
        return staff

    def _now(self) -> datetime:
        return self.moderation.clock()

    # -- routes ----------------------------------------------------------------------------
    async def me(self, request: Request) -> Response:
        staff = await self._staff(request)
        account = await get_account(self.hub.sessions, staff.account_id)
        limit = staff.authority.ban_limit
        return JSONResponse(
            {
                "id": account.id,
                "name": account.name,
                "role": staff.role.value,
                "powers": {
                    "recordings": staff.authority.recordings,
                    "administer": staff.authority.administer,
                    "ban_everything": staff.authority.ban_everything,
                    "ban_limit_minutes": None if limit is None else limit.total_seconds() // 60,
                },
            }
        )

    async def alarms(self, request: Request) -> Response:
        await self._staff(request)
        every = request.query_params.get("all") == "1"
        statuses = tuple(AlarmStatus) if every else (AlarmStatus.OPEN, AlarmStatus.TAKEN)
        found = await list_alarms(self.hub.sessions, statuses=statuses)
        return JSONResponse({"alarms": [alarm_json(a) for a in found]})

    async def take(self, request: Request) -> Response:
        staff = await self._staff(request)
        alarm = await self.moderation.take(request.path_params["alarm_id"], by=staff.account_id)
        return JSONResponse({"alarm": alarm_json(alarm)})

    async def resolve(self, request: Request) -> Response:
        staff = await self._staff(request)
        body = await read_json(request, ResolveBody, self.max_body_bytes)
        alarm = await self.moderation.resolve(
            request.path_params["alarm_id"],
            by=staff.account_id,
            outcome=body.outcome,
            note=body.note,
        )
        return JSONResponse({"alarm": alarm_json(alarm)})

    async def games(self, request: Request) -> Response:
        """Every unfinished game, private ones included (staff see all tables)."""
        await self._staff(request)
        games = await list_games(self.hub.sessions, statuses=(GameStatus.LOBBY, GameStatus.RUNNING))
        tables = [await self.hub.table(g.id) for g in games]
        return JSONResponse({"games": [self._table_json(t) for t in tables]})

    @staticmethod
    def _table_json(table: TableInfo) -> dict[str, Any]:
        out = table.to_json()
        out["players"] = [
            {"name": s.name, "channel": s.channel, "house": s.house, "account": s.account_id}
            for s in table.seats
        ]
        return out

    async def game(self, request: Request) -> Response:
        """The table and the operator view: the engine's projection for an operator, which
        holds public information only (no living player's role, no night room)."""
        await self._staff(request)
        game_id = request.path_params["game_id"]
        table = await self.hub.table(game_id)
        actor = await self.hub.readable(game_id)
        view = None
        if actor is not None and actor.state is not None:
            view = actor.view_for(Viewer.operator())
        alarms = await list_alarms(self.hub.sessions, statuses=tuple(AlarmStatus), game_id=game_id)
        return JSONResponse(
            {
                "game": self._table_json(table),
                "view": view,
                "alarms": [alarm_json(a) for a in alarms],
            }
        )

    async def impose(self, request: Request) -> Response:
        staff = await self._staff(request)
        body = await read_json(request, SanctionBody, self.max_body_bytes)
        if (body.account is None) == (body.phone is None):
            raise ApiError(400, "invalid_sanction", "name exactly one account or phone identity")
        subject = (
            Subject.account(body.account)
            if body.account is not None
            else Subject.phone(body.phone or 0)
        )
        area = Area.parse(body.area) if body.area else None
        duration = timedelta(minutes=body.minutes) if body.minutes is not None else None
        sanction = await self.moderation.impose(
            by=staff.account_id,
            subject=subject,
            kind=body.kind,
            reason=body.reason,
            area=area,
            duration=duration,
            game_id=body.game_id,
            alarm_id=body.alarm_id,
        )
        return JSONResponse({"sanction": sanction_json(sanction, self._now())}, status_code=201)

    async def lift(self, request: Request) -> Response:
        staff = await self._staff(request)
        sanction = await self.moderation.lift(
            request.path_params["sanction_id"], by=staff.account_id
        )
        return JSONResponse({"sanction": sanction_json(sanction, self._now())})

    async def bans(self, request: Request) -> Response:
        """Bans, newest first: those in force (or all with `all=1`), optionally of the
        accounts whose name starts with `q`."""
        await self._staff(request)
        now = self._now()
        every = request.query_params.get("all") == "1"
        query = request.query_params.get("q", "").strip()[:64]
        subjects: list[Subject | None] = [None]
        if query:
            subjects = [Subject.account(a["id"]) for a in await self._accounts_named(query)]
        found: dict[int, Sanction] = {}
        for subject in subjects:
            for sanction in await list_sanctions(
                self.hub.sessions,
                now=now,
                subject=subject,
                kind=SanctionKind.BAN,
                active_only=not every,
            ):
                found[sanction.id] = sanction
        accounts = {s.subject.id for s in found.values() if s.subject.kind is SubjectKind.ACCOUNT}
        names = await self._names(accounts)
        out = []
        for sanction in sorted(found.values(), key=lambda s: -s.id):
            item = sanction_json(sanction, now)
            is_account = sanction.subject.kind is SubjectKind.ACCOUNT
            item["name"] = names.get(sanction.subject.id) if is_account else None
            out.append(item)
        return JSONResponse({"bans": out})

    async def _accounts_named(self, prefix: str) -> list[dict[str, Any]]:
        key = prefix.casefold().replace("%", "").replace("_", "")
        async with self.hub.sessions() as session:
            rows = await session.scalars(
                select(AccountRow)
                .where(AccountRow.name_key.startswith(key))
                .order_by(AccountRow.name_key)
                .limit(SEARCH_LIMIT)
            )
            return [{"id": r.id, "name": r.name, "role": r.role} for r in rows]

    async def _names(self, ids: set[int]) -> dict[int, str]:
        if not ids:
            return {}
        async with self.hub.sessions() as session:
            rows = await session.execute(
                select(AccountRow.id, AccountRow.name).where(AccountRow.id.in_(ids))
            )
            return {row.id: row.name for row in rows}

    async def search_accounts(self, request: Request) -> Response:
        await self._staff(request)
        query = request.query_params.get("q", "").strip()[:64]
        return JSONResponse({"accounts": await self._accounts_named(query) if query else []})

    async def account(self, request: Request) -> Response:
        """One person: role, sanctions (all, newest first), karma, premium, credit, grants."""
        await self._staff(request)
        account_id = request.path_params["account_id"]
        sessions = self.hub.sessions
        account = await get_account(sessions, account_id)
        now = self._now()
        sanctions = await list_sanctions(
            sessions, now=now, subject=Subject.account(account_id), active_only=False
        )
        async with sessions() as session:
            phones = list(
                await session.scalars(
                    select(PhoneIdentityRow.id).where(PhoneIdentityRow.account_id == account_id)
                )
            )
        premium = await premium_until(sessions, account_id, now)
        return JSONResponse(
            {
                "account": {
                    "id": account.id,
                    "name": account.name,
                    "role": account.role.value,
                    "created_at": _iso(account.created_at),
                    "phones": phones,
                },
                "sanctions": [sanction_json(s, now) for s in sanctions],
                "karma": await karma_total(sessions, account_id),
                "karma_history": [
                    {"amount": e.amount, "reason": e.reason, "at": _iso(e.created_at)}
                    for e in await karma_history(sessions, account_id, limit=50)
                ],
                "premium_until": _iso(premium),
                "credit": await credit_balance(sessions, account_id),
                "credit_history": [
                    {
                        "amount": e.amount,
                        "balance": e.balance_after,
                        "reason": e.reason,
                        "at": _iso(e.created_at),
                    }
                    for e in await credit_history(sessions, account_id, limit=50)
                ],
                "grants": [
                    {
                        "name": g.name,
                        "value": g.value,
                        "reason": g.reason,
                        "expires_at": _iso(g.expires_at),
                    }
                    for g in await active_grants(sessions, account_id, now)
                ],
            }
        )

    # -- admins ----------------------------------------------------------------------------
    async def role(self, request: Request) -> Response:
        staff = await self._staff(request)
        body = await read_json(request, RoleBody, self.max_body_bytes)
        await administration.change_role(
            self.hub.sessions,
            self.moderation.settings,
            request.path_params["account_id"],
            body.role,
            by=staff.account_id,
            now=self._now(),
        )
        return JSONResponse({"ok": True, "role": body.role.value})

    async def grant(self, request: Request) -> Response:
        staff = await self._staff(request)
        body = await read_json(request, GrantBody, self.max_body_bytes)
        await administration.grant(
            self.hub.sessions,
            self.moderation.settings,
            body.kind,
            request.path_params["account_id"],
            by=staff.account_id,
            reason=body.reason,
            now=self._now(),
            amount=body.amount,
            duration=timedelta(days=body.days) if body.days is not None else None,
        )
        return JSONResponse({"ok": True})

    async def recordings(self, request: Request) -> Response:
        staff = await self._staff(request)
        found = await recordings.list_recordings(
            self.hub.sessions,
            self.moderation.settings,
            by=staff.account_id,
            now=self._now(),
            include_deleted=request.query_params.get("deleted") == "1",
        )
        return JSONResponse({"recordings": [recording_json(r) for r in found]})

    async def audio(self, request: Request) -> Response:
        """The decrypted audio as WAV, for an admin only; each request is a `recording.play`
        in the audit log (a player asking is `403 not_staff`, a moderator's attempt is
        refused AND audited by the core)."""
        staff = await self._staff(request)
        content = await recordings.play_recording(
            self.hub.sessions,
            self.moderation.vault,
            request.path_params["recording_id"],
            by=staff.account_id,
            now=self._now(),
        )
        return Response(
            wav_bytes(content.audio),
            media_type="audio/wav",
            headers={"Cache-Control": "no-store", "Content-Disposition": "inline"},
        )

    async def chat(self, request: Request) -> Response:
        staff = await self._staff(request)
        content = await recordings.play_recording(
            self.hub.sessions,
            self.moderation.vault,
            request.path_params["recording_id"],
            by=staff.account_id,
            now=self._now(),
        )
        return JSONResponse(
            {
                "complete": content.complete,
                "chat": [
                    {"at_ms": line.at_ms, "speaker": line.speaker, "text": line.text}
                    for line in content.chat
                ],
            },
            headers={"Cache-Control": "no-store"},
        )

    async def hold(self, request: Request) -> Response:
        staff = await self._staff(request)
        body = await read_json(request, HoldBody, self.max_body_bytes)
        recording = await recordings.hold_recording(
            self.hub.sessions,
            self.moderation.vault,
            request.path_params["recording_id"],
            by=staff.account_id,
            reason=body.reason,
            now=self._now(),
        )
        return JSONResponse({"recording": recording_json(recording)})

    async def release(self, request: Request) -> Response:
        staff = await self._staff(request)
        recording = await recordings.release_recording(
            self.hub.sessions,
            self.moderation.vault,
            request.path_params["recording_id"],
            by=staff.account_id,
            now=self._now(),
        )
        return JSONResponse({"recording": recording_json(recording)})

    async def delete(self, request: Request) -> Response:
        staff = await self._staff(request)
        recording = await recordings.delete_recording(
            self.hub.sessions,
            self.moderation.vault,
            request.path_params["recording_id"],
            by=staff.account_id,
            now=self._now(),
        )
        return JSONResponse({"recording": recording_json(recording)})

    async def audit(self, request: Request) -> Response:
        await self._admin(request)
        kind = request.query_params.get("target_kind") or None
        target = request.query_params.get("target_id") or None
        entries = await audit_log(self.hub.sessions, target_kind=kind, target_id=target, limit=200)
        return JSONResponse({"entries": [audit_json(e) for e in entries]})

    async def nodes(self, request: Request) -> Response:
        """Operators (admins): the node answering (its games and lease counters, as in its
        `/metrics`), every node that holds game leases in the store (live, expired, the soonest
        expiry, the latest renewal) and the leases, soonest expiry first (issue 15)."""
        await self._admin(request)
        now = self._now()
        stats = self.hub.node_stats()
        here = None if stats is None else stats.node
        nodes, leases = await lease_overview(self.hub.sessions, now=now)
        return JSONResponse(
            {
                "now": _iso(now),
                "node": None if stats is None else node_stats_json(stats),
                "nodes": [node_leases_json(node, here) for node in nodes],
                "leases": [lease_json(lease, now) for lease in leases],
            }
        )

    # -- the live queue --------------------------------------------------------------------
    async def socket(self, ws: WebSocket) -> None:
        """`/ws/mod`: the queue on connect, then every new or changed alarm at once (O1).

        The subscription is opened BEFORE the queue is read, so an alarm raised in between
        arrives (possibly twice; the page keys alarms by id). The role is read again before
        each push: a moderator demoted meanwhile is disconnected.
        """
        if not same_origin(ws):
            await ws.close(code=CLOSE_NOT_STAFF)
            return
        await ws.accept()
        account_id = self.sessions.account_id(ws)
        staff = await self._staff_of(account_id)
        if staff is None or not staff.authority.moderate:
            await ws.send_json({"type": "error", "error": "not_staff"})
            await ws.close(code=CLOSE_NOT_STAFF)
            return
        async with self.moderation.feed.subscribe() as queue:
            open_alarms = await list_alarms(self.hub.sessions)
            await ws.send_json({"type": "queue", "alarms": [alarm_json(a) for a in open_alarms]})
            reader = asyncio.create_task(self._read_until_closed(ws))
            try:
                while not reader.done():
                    getter = asyncio.create_task(queue.get())
                    done, _ = await asyncio.wait(
                        {getter, reader}, return_when=asyncio.FIRST_COMPLETED
                    )
                    if getter not in done:
                        getter.cancel()
                        break
                    staff = await self._staff_of(account_id)
                    if staff is None or not staff.authority.moderate:
                        await ws.close(code=CLOSE_NOT_STAFF)
                        break
                    await ws.send_json({"type": "alarm", "alarm": alarm_json(getter.result())})
            except (WebSocketDisconnect, RuntimeError):
                pass
            finally:
                reader.cancel()
                with contextlib.suppress(asyncio.CancelledError, WebSocketDisconnect):
                    await reader

    @staticmethod
    async def _read_until_closed(ws: WebSocket) -> None:
        """The console sends only pings; anything is answered with a pong, until it closes."""
        while True:
            message = await ws.receive()
            if message["type"] == "websocket.disconnect":
                return
            await ws.send_json({"type": "pong"})
