"""`vollmond admin ...`: the operators' moderation commands for scripts and the shell.

Every command that changes something or reads a recording acts as a staff account named by
`--by` (or ``VOLLMOND_ADMIN``), so the role rules apply and the audit log says who it was.
A person is named as an account name, ``tel:<caller number>`` or ``phone:<identity id>``.
Failures print one line on stderr and exit 1; there are no tracebacks for wrong input.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.table import Table

from vollmond.moderation import alarms, recordings, sanctions
from vollmond.moderation.administration import (
    GrantKind,
    change_role,
    grant,
    reset_password,
    reset_pin,
)
from vollmond.moderation.alarms import AlarmStatus
from vollmond.moderation.areas import Area
from vollmond.moderation.errors import ModerationError
from vollmond.moderation.games import abort_game
from vollmond.moderation.recordings import Vault
from vollmond.moderation.sanctions import SanctionKind
from vollmond.moderation.subjects import Subject, linked_subjects, phone_by_number
from vollmond.service.config import Settings
from vollmond.settings.toml import ConfigError
from vollmond.store import (
    Role,
    Sessions,
    StoreError,
    find_account,
    open_store,
)
from vollmond.store.owners import Owner
from vollmond.store.types import utcnow

T = TypeVar("T")

DataDir = Annotated[Path | None, typer.Option(help="Data directory [VOLLMOND_DATA_DIR].")]
ConfigFile = Annotated[
    Path | None, typer.Option(help="Operator settings file (TOML) [VOLLMOND_CONFIG].")
]
By = Annotated[
    str,
    typer.Option("--by", envvar="VOLLMOND_ADMIN", help="Staff account acting [VOLLMOND_ADMIN]."),
]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]

grant_app = typer.Typer(help="Give premium, credit, karma or larger private rounds (admins).")
recordings_app = typer.Typer(help="Encrypted recordings (admins only; every access audited).")


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(1)


def _run(
    data_dir: Path | None, config: Path | None, work: Callable[[Sessions, Settings], Awaitable[T]]
) -> T:
    """Open the store the service uses, run `work`, and turn refusals into one-line errors."""
    try:
        settings = Settings.from_env(config, data_dir=data_dir)
    except (ConfigError, ValueError) as exc:
        raise _fail(str(exc)) from None

    async def main() -> T:
        async with open_store(settings.database(), schema=settings.database_schema) as sessions:
            return await work(sessions, settings)

    try:
        return asyncio.run(main())
    except (ModerationError, StoreError, ValueError, LookupError, PermissionError) as exc:
        raise _fail(str(exc)) from None


async def _account_id(sessions: Sessions, name: str) -> int:
    account = await find_account(sessions, name)
    if account is None:
        raise LookupError(f"no account named {name!r}")
    return account.id


async def _subject(sessions: Sessions, text: str) -> Subject:
    """`tel:+4930...` (by caller number), `phone:17` (by identity id) or an account name."""
    kind, _, value = text.partition(":")
    if kind == "tel" and value:
        return await phone_by_number(sessions, value)
    if kind == "phone" and value.isdigit():
        return Subject.phone(int(value))
    return Subject.account(await _account_id(sessions, text))


def _duration(hours: float | None, days: float | None) -> timedelta | None:
    if hours is None and days is None:
        return None
    return timedelta(hours=hours or 0, days=days or 0)


def _iso(moment: datetime | None) -> str:
    return moment.isoformat(timespec="seconds") if moment is not None else "-"


def _print(rows: list[dict[str, Any]], as_json: bool, title: str) -> None:
    if as_json:
        sys.stdout.write(json.dumps(rows, default=str, ensure_ascii=False) + "\n")
        return
    table = Table(title=f"{title} ({len(rows)})")
    for column in rows[0] if rows else ["-"]:
        table.add_column(column)
    for row in rows:
        table.add_row(*(str(v) if v is not None else "-" for v in row.values()))
    Console(width=200).print(table)


def register(admin: typer.Typer) -> None:
    """Add the moderation commands to `vollmond admin`."""
    admin.command("set-role")(set_role_command)
    admin.command("ban")(ban_command)
    admin.command("unban")(unban_command)
    admin.command("bans")(bans_command)
    admin.command("alarms")(alarms_command)
    admin.command("reset-password")(reset_password_command)
    admin.command("reset-pin")(reset_pin_command)
    admin.command("abort-game")(abort_game_command)
    admin.add_typer(grant_app, name="grant")
    admin.add_typer(recordings_app, name="recordings")


def set_role_command(
    name: Annotated[str, typer.Argument(help="Account name.")],
    role: Annotated[Role, typer.Argument(help="player, moderator or admin.")],
    by: By,
    data_dir: DataDir = None,
    config: ConfigFile = None,
) -> None:
    """Make an account player, moderator or admin (admins only; audited)."""

    async def work(sessions: Sessions, settings: Settings) -> None:
        await change_role(
            sessions,
            settings.moderation,
            await _account_id(sessions, name),
            role,
            by=await _account_id(sessions, by),
            now=utcnow(),
        )

    _run(data_dir, config, work)
    Console().print(f"{name} is now {role.value}")


def ban_command(
    subject: Annotated[str, typer.Argument(help="Account name, tel:<number> or phone:<id>.")],
    area: Annotated[
        str,
        typer.Option(
            help="world:<id>, private, spectate, conference, mailbox, friends, web or all."
        ),
    ],
    reason: Annotated[str, typer.Option(help="Told to the banned person.")],
    by: By,
    hours: Annotated[float | None, typer.Option(min=0, help="Length in hours.")] = None,
    days: Annotated[float | None, typer.Option(min=0, help="Length in days.")] = None,
    data_dir: DataDir = None,
    config: ConfigFile = None,
) -> None:
    """Ban a person from an area; without --hours/--days the ban is permanent (admins only)."""

    async def work(sessions: Sessions, settings: Settings) -> sanctions.Sanction:
        return await sanctions.impose(
            sessions,
            settings.moderation,
            by=await _account_id(sessions, by),
            subject=await _subject(sessions, subject),
            kind=SanctionKind.BAN,
            area=Area.parse(area),
            reason=reason,
            duration=_duration(hours, days),
            now=utcnow(),
        )

    ban = _run(data_dir, config, work)
    Console().print(f"ban {ban.id}: {subject} from {ban.area} until {_iso(ban.expires_at)}")


def abort_game_command(
    game_id: Annotated[str, typer.Argument(help="The game's id.")],
    reason: Annotated[str, typer.Option(help="Why (in the audit log).")],
    by: By,
    data_dir: DataDir = None,
    config: ConfigFile = None,
) -> None:
    """Call off a game (admins only; audited). A running game is stopped by the running
    service within `enforce_poll_s` seconds; everyone at the table is told."""

    async def work(sessions: Sessions, settings: Settings) -> str:
        before = await abort_game(
            sessions,
            settings.moderation,
            game_id,
            by=await _account_id(sessions, by),
            reason=reason,
            now=utcnow(),
        )
        return before.value

    before = _run(data_dir, config, work)
    Console().print(f"game {game_id} aborted (was {before})")


def unban_command(
    sanction_id: Annotated[int, typer.Argument(help="The ban's id (see `bans`).")],
    by: By,
    data_dir: DataDir = None,
    config: ConfigFile = None,
) -> None:
    """Lift a ban (a moderator cannot lift an admin-only ban)."""

    async def work(sessions: Sessions, settings: Settings) -> None:
        await sanctions.lift(
            sessions,
            settings.moderation,
            sanction_id,
            by=await _account_id(sessions, by),
            now=utcnow(),
        )

    _run(data_dir, config, work)
    Console().print(f"ban {sanction_id} lifted")


def bans_command(
    subject: Annotated[
        str | None, typer.Argument(help="Only this person (name, tel:, phone:).")
    ] = None,
    everything: Annotated[bool, typer.Option("--all", help="Also lifted and expired.")] = False,
    as_json: AsJson = False,
    data_dir: DataDir = None,
    config: ConfigFile = None,
) -> None:
    """List bans in force (newest first)."""

    async def work(sessions: Sessions, settings: Settings) -> list[sanctions.Sanction]:
        return await sanctions.list_sanctions(
            sessions,
            now=utcnow(),
            subject=await _subject(sessions, subject) if subject else None,
            kind=SanctionKind.BAN,
            active_only=not everything,
        )

    rows = [
        {
            "id": ban.id,
            "subject": str(ban.subject),
            "area": str(ban.area),
            "reason": ban.reason,
            "by": ban.created_by,
            "created": _iso(ban.created_at),
            "expires": _iso(ban.expires_at) if ban.expires_at else "permanent",
            "lifted": _iso(ban.lifted_at),
        }
        for ban in _run(data_dir, config, work)
    ]
    _print(rows, as_json, "bans")


def alarms_command(
    everything: Annotated[bool, typer.Option("--all", help="Also resolved alarms.")] = False,
    as_json: AsJson = False,
    data_dir: DataDir = None,
    config: ConfigFile = None,
) -> None:
    """The alarm queue: open and taken operator calls, oldest first."""
    statuses = tuple(AlarmStatus) if everything else (AlarmStatus.OPEN, AlarmStatus.TAKEN)

    async def work(sessions: Sessions, settings: Settings) -> list[alarms.Alarm]:
        return await alarms.list_alarms(sessions, statuses=statuses)

    rows = [
        {
            "id": alarm.id,
            "game": alarm.game_id,
            "round": alarm.round,
            "phase": alarm.phase,
            "caller": alarm.caller.account_id or alarm.caller.phone_identity_id,
            "house": alarm.caller.house,
            "reason": alarm.reason,
            "accused": alarm.accused_house,
            "at": _iso(alarm.created_at),
            "status": alarm.status.value,
            "taken_by": alarm.taken_by,
            "outcome": alarm.outcome.value if alarm.outcome else None,
            "note": alarm.note,
        }
        for alarm in _run(data_dir, config, work)
    ]
    _print(rows, as_json, "alarms")


def reset_password_command(
    name: Annotated[str, typer.Argument(help="Account name.")],
    by: By,
    password: Annotated[str, typer.Option(prompt=True, hide_input=True, confirmation_prompt=True)],
    data_dir: DataDir = None,
    config: ConfigFile = None,
) -> None:
    """Set a new password for an account (admins only; audited)."""

    async def work(sessions: Sessions, settings: Settings) -> None:
        await reset_password(
            sessions,
            settings.moderation,
            await _account_id(sessions, name),
            password,
            by=await _account_id(sessions, by),
            now=utcnow(),
        )

    _run(data_dir, config, work)
    Console().print(f"password of {name} reset")


def reset_pin_command(
    phone: Annotated[str, typer.Argument(help="tel:<caller number> or phone:<identity id>.")],
    by: By,
    pin: Annotated[str, typer.Option(prompt=True, hide_input=True, confirmation_prompt=True)],
    data_dir: DataDir = None,
    config: ConfigFile = None,
) -> None:
    """Set a new telephone PIN for a phone identity (admins only; audited)."""

    async def work(sessions: Sessions, settings: Settings) -> None:
        subject = await _subject(sessions, phone)
        if subject.kind.value != "phone":
            raise ValueError("name the phone identity as tel:<number> or phone:<id>")
        await reset_pin(
            sessions,
            settings.moderation,
            subject.id,
            pin,
            by=await _account_id(sessions, by),
            now=utcnow(),
        )

    _run(data_dir, config, work)
    Console().print(f"PIN of {phone} reset")


async def _ledger(sessions: Sessions, text: str) -> Owner:
    """Whose ledger `text` (as `_subject`) names: the person's account, else the phone-only
    identity (a linked phone identity books to its account, like a penalty)."""
    subject = await _subject(sessions, text)
    async with sessions() as session:
        ledger = (await linked_subjects(session, subject)).ledger
    assert ledger is not None  # a single subject always has one
    return ledger


def _granting(
    kind: GrantKind,
    name: str,
    by: str,
    reason: str,
    data_dir: Path | None,
    config: Path | None,
    *,
    amount: int | None = None,
    days: float | None = None,
) -> None:
    async def work(sessions: Sessions, settings: Settings) -> None:
        await grant(
            sessions,
            settings.moderation,
            kind,
            await _ledger(sessions, name),
            by=await _account_id(sessions, by),
            reason=reason,
            amount=amount,
            duration=timedelta(days=days) if days is not None else None,
            now=utcnow(),
        )

    _run(data_dir, config, work)
    Console().print(f"granted {kind.value} to {name}")


Reason = Annotated[str, typer.Option(help="Why (kept in the ledger and the audit log).")]


@grant_app.command("premium")
def grant_premium_command(
    name: str,
    days: Annotated[float, typer.Option(min=0, help="How long premium lasts.")],
    reason: Reason,
    by: By,
    data_dir: DataDir = None,
    config: ConfigFile = None,
) -> None:
    """Premium for DAYS days from now, for an account or a phone identity (`tel:+49...`)."""
    _granting(GrantKind.PREMIUM, name, by, reason, data_dir, config, days=days)


@grant_app.command("credit")
def grant_credit_command(
    name: str,
    amount: Annotated[int, typer.Argument(help="Credit to add (negative to take).")],
    reason: Reason,
    by: By,
    data_dir: DataDir = None,
    config: ConfigFile = None,
) -> None:
    """Book credit to an account, or to a phone identity (`tel:+49...`, `phone:ID`)."""
    _granting(GrantKind.CREDIT, name, by, reason, data_dir, config, amount=amount)


@grant_app.command("karma")
def grant_karma_command(
    name: str,
    amount: Annotated[int, typer.Argument(help="Karma to add (negative to take).")],
    reason: Reason,
    by: By,
    data_dir: DataDir = None,
    config: ConfigFile = None,
) -> None:
    """Book karma to an account, or to a phone identity (`tel:+49...`, `phone:ID`)."""
    _granting(GrantKind.KARMA, name, by, reason, data_dir, config, amount=amount)


@grant_app.command("private_seats")
def grant_private_seats_command(
    name: str,
    seats: Annotated[int, typer.Argument(min=1, help="Largest private round allowed.")],
    reason: Reason,
    by: By,
    days: Annotated[float | None, typer.Option(min=0, help="Limit in days; none = open.")] = None,
    data_dir: DataDir = None,
    config: ConfigFile = None,
) -> None:
    """Let one person found private rounds of up to SEATS seats (P2 personal unlock)."""
    _granting(GrantKind.PRIVATE_SEATS, name, by, reason, data_dir, config, amount=seats, days=days)


def _vault(settings: Settings) -> Vault:
    return Vault.open(settings.moderation, settings.data_dir)


@recordings_app.command("list")
def recordings_list_command(
    by: By,
    game: Annotated[str | None, typer.Option(help="Only this game.")] = None,
    deleted: Annotated[bool, typer.Option(help="Include deleted recordings.")] = False,
    as_json: AsJson = False,
    data_dir: DataDir = None,
    config: ConfigFile = None,
) -> None:
    """List recordings (audited)."""

    async def work(sessions: Sessions, settings: Settings) -> list[recordings.Recording]:
        return await recordings.list_recordings(
            sessions,
            settings.moderation,
            by=await _account_id(sessions, by),
            now=utcnow(),
            include_deleted=deleted,
            game_id=game,
        )

    rows = [
        {
            "id": r.id,
            "game": r.game_id,
            "alarm": r.alarm_id,
            "room": r.room,
            "started": _iso(r.started_at),
            "ended": _iso(r.ended_at),
            "hold": r.hold_reason,
            "deleted": _iso(r.deleted_at),
        }
        for r in _run(data_dir, config, work)
    ]
    _print(rows, as_json, "recordings")


@recordings_app.command("hold")
def recordings_hold_command(
    recording_id: str,
    reason: Annotated[str, typer.Option(help="Why it is kept as evidence.")],
    by: By,
    data_dir: DataDir = None,
    config: ConfigFile = None,
) -> None:
    """Put a recording on evidence hold: it is not deleted after the retention time."""

    async def work(sessions: Sessions, settings: Settings) -> None:
        await recordings.hold_recording(
            sessions,
            _vault(settings),
            recording_id,
            by=await _account_id(sessions, by),
            reason=reason,
            now=utcnow(),
        )

    _run(data_dir, config, work)
    Console().print(f"recording {recording_id} on hold")


@recordings_app.command("release")
def recordings_release_command(
    recording_id: str, by: By, data_dir: DataDir = None, config: ConfigFile = None
) -> None:
    """Lift an evidence hold."""

    async def work(sessions: Sessions, settings: Settings) -> None:
        await recordings.release_recording(
            sessions,
            _vault(settings),
            recording_id,
            by=await _account_id(sessions, by),
            now=utcnow(),
        )

    _run(data_dir, config, work)
    Console().print(f"recording {recording_id} released")


@recordings_app.command("export")
def recordings_export_command(
    recording_id: str,
    dest: Annotated[Path, typer.Argument(help="WAV file to write (chat beside it, .chat.txt).")],
    by: By,
    data_dir: DataDir = None,
    config: ConfigFile = None,
) -> None:
    """Write a recording decrypted: audio as WAV, chat as text (audited)."""

    async def work(sessions: Sessions, settings: Settings) -> tuple[Path, Path]:
        return await recordings.export_recording(
            sessions,
            _vault(settings),
            recording_id,
            dest,
            by=await _account_id(sessions, by),
            now=utcnow(),
        )

    wav_path, chat_path = _run(data_dir, config, work)
    Console().print(f"wrote {wav_path} and {chat_path}")
