"""Recordings as the service keeps them (O2-O4): metadata in the database, the encrypted file
in the recordings directory, and every access by an admin written to the audit log (O3).

Only admins list, play, export, hold, release and delete; a refused attempt is audited too.
Retention: :func:`purge_expired` deletes what is older than `retention_days` unless an admin
put it on evidence hold; deleting removes the file AND the wrapped key, so a backup copy of
the file can no longer be opened either.
"""

from __future__ import annotations

import os
import uuid
import wave
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from sqlalchemy import select

from vollmond.moderation import audit
from vollmond.moderation.authority import load_staff
from vollmond.moderation.errors import (
    NotPermittedError,
    RecordingDeletedError,
    RecordingNotFoundError,
    VaultKeyError,
)
from vollmond.moderation.vault import (
    KEY_BYTES,
    SAMPLE_BYTES,
    SAMPLE_RATE,
    RecordingContent,
    RecordingWriter,
    ServiceKey,
    load_service_key,
    read_recording,
)
from vollmond.settings.moderation import ModerationSettings
from vollmond.store._validate import check_aware
from vollmond.store.db import Sessions
from vollmond.store.models import RecordingRow

HOLD_REASON_MAX_LENGTH = 500
_TARGET = "recording"


@dataclass(frozen=True, slots=True)
class Vault:
    """Where recordings live and the key that opens them; built once at service start."""

    key: ServiceKey
    directory: Path
    settings: ModerationSettings

    @staticmethod
    def open(settings: ModerationSettings, data_dir: Path) -> Vault:
        """Resolve the settings' paths against the data directory; create key and directory."""
        key = load_service_key(_resolve(data_dir, settings.vault_key_path))
        directory = _resolve(data_dir, settings.recordings_dir)
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        return Vault(key, directory, settings)


def _resolve(data_dir: Path, configured: str) -> Path:
    path = Path(configured).expanduser()
    return path if path.is_absolute() else data_dir / path


@dataclass(frozen=True, slots=True)
class Recording:
    """A recording's metadata as an admin sees it in the list."""

    id: str
    game_id: str | None
    alarm_id: int | None
    room: str
    started_at: datetime
    ended_at: datetime | None
    hold_reason: str | None
    hold_by: int | None
    held_at: datetime | None
    deleted_at: datetime | None


def _recording(row: RecordingRow) -> Recording:
    return Recording(
        id=row.id,
        game_id=row.game_id,
        alarm_id=row.alarm_id,
        room=row.room,
        started_at=row.started_at,
        ended_at=row.ended_at,
        hold_reason=row.hold_reason,
        hold_by=row.hold_by,
        held_at=row.held_at,
        deleted_at=row.deleted_at,
    )


async def start_recording(
    sessions: Sessions,
    vault: Vault,
    *,
    room: str,
    now: datetime,
    game_id: str | None = None,
    alarm_id: int | None = None,
) -> RecordingWriter:
    """Begin a recording (after the warning and tone, O2/O4): a fresh key, wrapped, stored.

    The row is committed before the first byte is written, so the retention job knows every
    file that exists. The service is the actor of the audit entry.
    """
    check_aware(now, "now")
    recording_id = uuid.uuid4().hex
    key = os.urandom(KEY_BYTES)
    wrapped, nonce = vault.key.wrap(key, recording_id)
    filename = f"{recording_id}.vrec"
    async with sessions.begin() as session:
        session.add(
            RecordingRow(
                id=recording_id,
                game_id=game_id,
                alarm_id=alarm_id,
                room=room,
                started_at=now,
                blob_path=filename,
                wrapped_key=wrapped,
                key_nonce=nonce,
                key_fingerprint=vault.key.fingerprint,
            )
        )
        audit.record(
            session,
            actor=None,
            action="recording.start",
            target_kind=_TARGET,
            target_id=recording_id,
            now=now,
            detail=f"game={game_id} room={room}",
        )
    return RecordingWriter(vault.directory / filename, key, recording_id)


async def finish_recording(sessions: Sessions, writer: RecordingWriter, *, now: datetime) -> None:
    """Seal the file and note the end time."""
    writer.close()
    async with sessions.begin() as session:
        row = await session.get(RecordingRow, writer.recording_id, with_for_update=True)
        if row is None:
            raise RecordingNotFoundError(writer.recording_id)
        row.ended_at = now


async def _admin_or_audit_refusal(
    sessions: Sessions,
    settings: ModerationSettings,
    by: int,
    action: str,
    target: str,
    now: datetime,
) -> None:
    """Only admins touch recordings (O3). A refused attempt is written to the audit log in its
    own transaction, since the refusal itself is worth knowing about."""
    async with sessions() as session:
        staff = await load_staff(session, by, settings)
    if staff.authority.recordings:
        return
    async with sessions.begin() as session:
        audit.record(
            session,
            actor=by,
            action=f"recording.{action}.refused",
            target_kind=_TARGET,
            target_id=target,
            now=now,
        )
    raise NotPermittedError(by, f"{action} recordings")


async def list_recordings(
    sessions: Sessions,
    settings: ModerationSettings,
    *,
    by: int,
    now: datetime,
    include_deleted: bool = False,
    game_id: str | None = None,
) -> list[Recording]:
    """The recordings, newest first; admins only, and the listing is audited."""
    check_aware(now, "now")
    await _admin_or_audit_refusal(sessions, settings, by, "list", "*", now)
    query = select(RecordingRow)
    if not include_deleted:
        query = query.where(RecordingRow.deleted_at.is_(None))
    if game_id is not None:
        query = query.where(RecordingRow.game_id == game_id)
    async with sessions.begin() as session:
        rows = list(await session.scalars(query.order_by(RecordingRow.started_at.desc())))
        audit.record(
            session,
            actor=by,
            action="recording.list",
            target_kind=_TARGET,
            target_id=game_id or "*",
            now=now,
            detail=f"{len(rows)} recordings",
        )
        return [_recording(row) for row in rows]


async def _open(
    sessions: Sessions, vault: Vault, *, by: int, recording_id: str, action: str, now: datetime
) -> RecordingContent:
    check_aware(now, "now")
    await _admin_or_audit_refusal(sessions, vault.settings, by, action, recording_id, now)
    async with sessions.begin() as session:
        row = await session.get(RecordingRow, recording_id)
        if row is None:
            raise RecordingNotFoundError(recording_id)
        if row.deleted_at is not None:
            raise RecordingDeletedError(recording_id)
        if row.key_fingerprint != vault.key.fingerprint:
            raise VaultKeyError(
                f"recording {recording_id} was sealed with service key {row.key_fingerprint}, "
                f"this service has {vault.key.fingerprint}"
            )
        audit.record(
            session,
            actor=by,
            action=f"recording.{action}",
            target_kind=_TARGET,
            target_id=recording_id,
            now=now,
        )
        key = vault.key.unwrap(row.wrapped_key, row.key_nonce, recording_id)
        data = (vault.directory / row.blob_path).read_bytes()
    return read_recording(data, key, recording_id)


async def play_recording(
    sessions: Sessions, vault: Vault, recording_id: str, *, by: int, now: datetime
) -> RecordingContent:
    """Decrypt a recording for an admin to listen to (audited as `recording.play`)."""
    return await _open(sessions, vault, by=by, recording_id=recording_id, action="play", now=now)


async def export_recording(
    sessions: Sessions, vault: Vault, recording_id: str, dest: Path, *, by: int, now: datetime
) -> tuple[Path, Path]:
    """Write the decrypted audio as a WAV file and the chat as a text file beside it
    (audited as `recording.export`); returns both paths. Files are created 0600."""
    content = await _open(
        sessions, vault, by=by, recording_id=recording_id, action="export", now=now
    )
    wav_path = dest if dest.suffix == ".wav" else dest.with_suffix(".wav")
    chat_path = wav_path.with_suffix(".chat.txt")
    fd = os.open(wav_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f, wave.open(f, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(SAMPLE_BYTES)
        wav.setframerate(SAMPLE_RATE)
        wav.writeframes(content.audio)
    lines = [f"{line.at_ms / 1000:8.2f}s  {line.speaker}: {line.text}" for line in content.chat]
    if not content.complete:
        lines.append("(recording incomplete: the service stopped before it was closed)")
    fd = os.open(chat_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as text:
        text.write("\n".join(lines) + ("\n" if lines else ""))
    return wav_path, chat_path


async def _change(
    sessions: Sessions,
    vault: Vault,
    recording_id: str,
    *,
    by: int,
    now: datetime,
    action: str,
    detail: str = "",
) -> RecordingRow:
    check_aware(now, "now")
    await _admin_or_audit_refusal(sessions, vault.settings, by, action, recording_id, now)
    async with sessions.begin() as session:
        row = await session.get(RecordingRow, recording_id, with_for_update=True)
        if row is None:
            raise RecordingNotFoundError(recording_id)
        if row.deleted_at is not None:
            raise RecordingDeletedError(recording_id)
        if action == "hold":
            row.hold_reason, row.hold_by, row.held_at = detail, by, now
        elif action == "release":
            row.hold_reason, row.hold_by, row.held_at = None, None, None
        else:
            _shred(vault, row, now)
        audit.record(
            session,
            actor=by,
            action=f"recording.{action}",
            target_kind=_TARGET,
            target_id=recording_id,
            now=now,
            detail=detail,
        )
    return row


def _shred(vault: Vault, row: RecordingRow, now: datetime) -> None:
    """Delete the file and forget the wrapped key: without it no copy of the file opens."""
    (vault.directory / row.blob_path).unlink(missing_ok=True)
    row.wrapped_key = b""
    row.key_nonce = b""
    row.deleted_at = now


async def hold_recording(
    sessions: Sessions, vault: Vault, recording_id: str, *, by: int, reason: str, now: datetime
) -> Recording:
    """Put a recording on evidence hold: the retention job keeps it until it is released."""
    cleaned = reason.strip()
    if not cleaned or len(cleaned) > HOLD_REASON_MAX_LENGTH:
        raise ValueError(f"an evidence hold needs a reason of 1 to {HOLD_REASON_MAX_LENGTH} chars")
    row = await _change(
        sessions, vault, recording_id, by=by, now=now, action="hold", detail=cleaned
    )
    return _recording(row)


async def release_recording(
    sessions: Sessions, vault: Vault, recording_id: str, *, by: int, now: datetime
) -> Recording:
    """Lift the evidence hold; the recording is then deleted once it is old enough."""
    return _recording(
        await _change(sessions, vault, recording_id, by=by, now=now, action="release")
    )


async def delete_recording(
    sessions: Sessions, vault: Vault, recording_id: str, *, by: int, now: datetime
) -> Recording:
    """Delete a recording before its time (an admin's decision, audited)."""
    return _recording(await _change(sessions, vault, recording_id, by=by, now=now, action="delete"))


async def purge_expired(sessions: Sessions, vault: Vault, *, now: datetime) -> list[str]:
    """The retention job (O3): delete every recording that started more than `retention_days`
    before `now` and is not on hold, auditing each deletion; returns the deleted ids.

    Safe to run from several nodes at once: each row is locked and re-checked before it goes.
    """
    check_aware(now, "now")
    cutoff = now - timedelta(days=vault.settings.retention_days)
    expired = (
        RecordingRow.deleted_at.is_(None),
        RecordingRow.held_at.is_(None),
        RecordingRow.started_at < cutoff,
    )
    async with sessions() as session:
        candidates = list(await session.scalars(select(RecordingRow.id).where(*expired)))
    deleted: list[str] = []
    for recording_id in candidates:
        async with sessions.begin() as session:
            row = await session.scalar(
                select(RecordingRow)
                .where(RecordingRow.id == recording_id, *expired)
                .with_for_update()
            )
            if row is None:
                continue
            _shred(vault, row, now)
            audit.record(
                session,
                actor=None,
                action="recording.purge",
                target_kind=_TARGET,
                target_id=recording_id,
                now=now,
                detail=f"retention {vault.settings.retention_days} days",
            )
        deleted.append(recording_id)
    return deleted
