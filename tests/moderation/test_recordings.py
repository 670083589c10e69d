"""O3: recordings are encrypted, only admins retrieve them, every retrieval is logged, and
they are deleted after the retention time unless held as evidence (clock under test control).
"""

from __future__ import annotations

import os
import stat
import wave
from pathlib import Path

import numpy as np
import pytest

from vollmond.moderation import (
    Moderation,
    NotPermittedError,
    RecordingDamagedError,
    RecordingDeletedError,
    VaultKeyError,
)
from vollmond.moderation.audit import audit_log
from vollmond.moderation.recordings import (
    Vault,
    delete_recording,
    export_recording,
    hold_recording,
    list_recordings,
    play_recording,
    release_recording,
)
from vollmond.moderation.vault import RecordingWriter, load_service_key
from vollmond.settings.moderation import ModerationSettings
from vollmond.store import Sessions
from vollmond.store.models import RecordingRow

from .conftest import Clock, People


def speech(seconds: float, seed: int = 7) -> bytes:
    """Distinctive 8 kHz PCM: a chirp plus noise, so any copy of it is easy to find."""
    t = np.arange(int(8000 * seconds)) / 8000
    rng = np.random.default_rng(seed)
    wave_ = 8000 * np.sin(2 * np.pi * (300 + 200 * t) * t) + rng.normal(0, 500, t.size)
    return wave_.astype("<i2").tobytes()


async def record(moderation: Moderation, game_id: str, audio: bytes) -> str:
    writer = await moderation.start_recording(room="market", game_id=game_id)
    for at in range(0, len(audio), 320):  # 20 ms frames, as the mixer delivers them
        if at == 16000:  # one second in
            writer.write_chat("Haus 3", "Das war abgesprochen!")
        writer.write_audio(audio[at : at + 320])
    await moderation.finish_recording(writer)
    return writer.recording_id


@pytest.mark.rule("O3")
async def test_stored_bytes_hold_no_audio_in_the_clear(
    moderation: Moderation, sessions: Sessions, people: People, game_id: str
) -> None:
    audio = speech(3)
    recording_id = await record(moderation, game_id, audio)
    vault = moderation.vault
    stored = (vault.directory / f"{recording_id}.vrec").read_bytes()
    # Not the audio, not any 20 ms piece of it, not the chat line.
    assert audio not in stored
    assert all(audio[at : at + 320] not in stored for at in range(0, len(audio), 320))
    assert b"abgesprochen" not in stored
    # The database holds only a wrapped key, which is not the service key or the audio.
    async with sessions() as session:
        row = await session.get(RecordingRow, recording_id)
    assert row is not None
    assert vault.key.secret not in row.wrapped_key
    assert stat.S_IMODE(os.stat(vault.directory / row.blob_path).st_mode) == 0o600
    content = await play_recording(
        sessions, vault, recording_id, by=people.admin, now=moderation.clock()
    )
    assert content.audio == audio
    assert content.complete
    assert [(c.at_ms, c.speaker, c.text) for c in content.chat] == [
        (1000, "Haus 3", "Das war abgesprochen!")
    ]


@pytest.mark.rule("O3")
async def test_only_admins_retrieve_and_every_access_is_audited(
    moderation: Moderation, sessions: Sessions, people: People, game_id: str, tmp_path: Path
) -> None:
    recording_id = await record(moderation, game_id, speech(2))
    vault = moderation.vault
    now = moderation.clock()
    for staff in (people.moderator, people.alice):
        with pytest.raises(NotPermittedError):
            await play_recording(sessions, vault, recording_id, by=staff, now=now)
        with pytest.raises(NotPermittedError):
            await list_recordings(sessions, moderation.settings, by=staff, now=now)
        with pytest.raises(NotPermittedError):
            await export_recording(sessions, vault, recording_id, tmp_path / "x", by=staff, now=now)
        with pytest.raises(NotPermittedError):
            await hold_recording(sessions, vault, recording_id, by=staff, reason="r", now=now)
    assert not (tmp_path / "x.wav").exists()

    listed = await list_recordings(sessions, moderation.settings, by=people.admin, now=now)
    assert [r.id for r in listed] == [recording_id]
    await play_recording(sessions, vault, recording_id, by=people.admin, now=now)
    wav_path, chat_path = await export_recording(
        sessions, vault, recording_id, tmp_path / "evidence", by=people.admin, now=now
    )
    with wave.open(str(wav_path), "rb") as wav:
        assert (wav.getframerate(), wav.getnchannels(), wav.getnframes()) == (8000, 1, 16000)
    assert "Das war abgesprochen!" in chat_path.read_text()
    await hold_recording(sessions, vault, recording_id, by=people.admin, reason="Fall 17", now=now)
    await release_recording(sessions, vault, recording_id, by=people.admin, now=now)
    await delete_recording(sessions, vault, recording_id, by=people.admin, now=now)
    with pytest.raises(RecordingDeletedError):
        await play_recording(sessions, vault, recording_id, by=people.admin, now=now)

    entries = await audit_log(sessions, target_kind="recording")
    trail = [(e.actor_account_id, e.action) for e in reversed(entries)]
    refused = [
        (staff, f"recording.{action}.refused")
        for staff in (people.moderator, people.alice)
        for action in ("play", "list", "export", "hold")
    ]
    assert (
        trail
        == [
            (None, "recording.start"),
            *refused,
            (people.admin, "recording.list"),
            (people.admin, "recording.play"),
            (people.admin, "recording.export"),
            (people.admin, "recording.hold"),
            (people.admin, "recording.release"),
            (people.admin, "recording.delete"),
            (people.admin, "recording.play.refused"),
        ][: len(trail)]
    )
    assert all(e.created_at == now for e in entries)


@pytest.mark.rule("O3")
async def test_deleted_after_retention_unless_on_evidence_hold(
    moderation: Moderation, sessions: Sessions, clock: Clock, people: People, game_id: str
) -> None:
    old = await record(moderation, game_id, speech(1, seed=1))
    held = await record(moderation, game_id, speech(1, seed=2))
    clock.advance(days=10)
    young = await record(moderation, game_id, speech(1, seed=3))
    vault = moderation.vault
    await hold_recording(sessions, vault, held, by=people.admin, reason="Anzeige", now=clock.now)

    clock.advance(days=20)  # `old` and `held` are exactly 30 days old: not yet expired.
    assert await moderation.purge_expired() == []
    clock.advance(seconds=1)
    assert await moderation.purge_expired() == [old]
    assert not (vault.directory / f"{old}.vrec").exists()
    assert (vault.directory / f"{held}.vrec").exists()
    async with sessions() as session:
        gone = await session.get(RecordingRow, old)
    assert gone is not None
    assert (gone.deleted_at, gone.wrapped_key) == (clock.now, b"")  # the key is shredded too
    purges = [
        e
        for e in await audit_log(sessions, target_kind="recording")
        if e.action == "recording.purge"
    ]
    assert [(e.actor_account_id, e.target_id, e.created_at) for e in purges] == [
        (None, old, clock.now)
    ]

    clock.advance(days=10)
    assert await moderation.purge_expired() == [young]
    await release_recording(sessions, vault, held, by=people.admin, now=clock.now)
    assert await moderation.purge_expired() == [held]
    assert await moderation.purge_expired() == []
    listed = await list_recordings(sessions, moderation.settings, by=people.admin, now=clock.now)
    assert listed == []


async def test_retention_days_is_a_setting(
    sessions: Sessions, clock: Clock, game_id: str, tmp_path: Path
) -> None:
    moderation = Moderation(
        sessions, ModerationSettings(retention_days=2), tmp_path / "data", clock=clock
    )
    recording_id = await record(moderation, game_id, speech(0.1))
    clock.advance(days=2, seconds=1)
    assert await moderation.purge_expired() == [recording_id]


def test_service_key_file_is_created_once_0600_and_checked(tmp_path: Path) -> None:
    path = tmp_path / "data" / "recordings.key"
    first = load_service_key(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_service_key(path) == first
    path.chmod(0o644)
    with pytest.raises(VaultKeyError, match="readable"):
        load_service_key(path)
    path.chmod(0o600)
    path.write_bytes(b"short")
    with pytest.raises(VaultKeyError, match="bytes"):
        load_service_key(path)


async def test_a_wrong_service_key_is_named_not_mistaken_for_damage(
    moderation: Moderation, sessions: Sessions, people: People, game_id: str, tmp_path: Path
) -> None:
    recording_id = await record(moderation, game_id, speech(0.2))
    other = Vault.open(
        ModerationSettings(
            vault_key_path=str(tmp_path / "other.key"),
            recordings_dir=str(moderation.vault.directory),
        ),
        tmp_path,
    )
    with pytest.raises(VaultKeyError, match="sealed with service key"):
        await play_recording(sessions, other, recording_id, by=people.admin, now=moderation.clock())


def test_tampering_truncation_and_swapping_are_detected(tmp_path: Path) -> None:
    key = os.urandom(32)
    audio = speech(5)

    def written(name: str) -> bytes:
        writer = RecordingWriter(tmp_path / name, key, name)
        for at in range(0, len(audio), 320):
            writer.write_audio(audio[at : at + 320])
        writer.write_chat("Haus 1", "hallo")
        writer.close()
        return (tmp_path / name).read_bytes()

    from vollmond.moderation.vault import read_recording  # noqa: PLC0415

    data = written("a")
    assert read_recording(data, key, "a").audio == audio
    flipped = bytearray(data)
    flipped[100] ^= 1
    with pytest.raises(RecordingDamagedError):
        read_recording(bytes(flipped), key, "a")
    with pytest.raises(RecordingDamagedError):
        read_recording(data, key, "b")  # a file moved under another recording's id
    with pytest.raises(RecordingDamagedError):
        read_recording(data, os.urandom(32), "a")
    # Cut after the first whole frame: readable, but marked incomplete.
    frame_end = 6 + 4 + int.from_bytes(data[6:10], "big")
    cut = read_recording(data[:frame_end], key, "a")
    assert not cut.complete
    assert audio.startswith(cut.audio) and 0 < len(cut.audio) < len(audio)
    with pytest.raises(RecordingDamagedError):
        read_recording(data[: frame_end + 7], key, "a")
