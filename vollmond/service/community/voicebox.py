"""Voice messages at rest: each one a file under ``<data-dir>/mailbox``, encrypted.

Chosen because it is cheap: the recording vault's format (vollmond/moderation/vault.py) is
reused as it is — AES-GCM with a fresh key per message, sealed in frames that cannot be
reordered or cut off unnoticed, the key wrapped by a service key kept in a file outside the
database (``<data-dir>/mailbox.key``, 0600, its own key, so the recordings' key opens no
mailbox and the other way round). Whoever steals the database gets wrapped keys only; whoever
steals the directory gets ciphertext only.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import secrets
from pathlib import Path
from typing import Final

from vollmond.moderation.vault import (
    KEY_BYTES,
    RecordingWriter,
    ServiceKey,
    load_service_key,
    read_recording,
)
from vollmond.store.community import VoiceFile

KEY_FILE: Final = "mailbox.key"
DIRECTORY: Final = "mailbox"
_NAME = re.compile(r"[0-9a-f]{32}")


class VoiceBox:
    """Seals, opens and removes voice messages' audio (8 kHz signed 16-bit mono PCM).

    The directory and the key file are made on first use, so a service (or a test) that never
    records a voice message leaves no trace of the mailbox on disk."""

    def __init__(self, data_dir: Path) -> None:
        self.directory = data_dir / DIRECTORY
        self.key_path = data_dir / KEY_FILE
        self._key: ServiceKey | None = None

    @classmethod
    def open(cls, data_dir: Path) -> VoiceBox:
        return cls(data_dir)

    @property
    def key(self) -> ServiceKey:
        if self._key is None:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            self._key = load_service_key(self.key_path)
        return self._key

    def _path(self, name: str) -> Path:
        if not _NAME.fullmatch(name):
            raise ValueError(f"not a voice message file: {name!r}")
        return self.directory / f"{name}.vmrec"

    def _seal(self, pcm: bytes) -> VoiceFile:
        service_key = self.key  # makes the directory and the key file on first use
        name = secrets.token_hex(16)
        key = secrets.token_bytes(KEY_BYTES)
        writer = RecordingWriter(self._path(name), key, name)
        try:
            writer.write_audio(pcm)
        finally:
            writer.close()
        wrapped, nonce = service_key.wrap(key, name)
        return VoiceFile(name, wrapped, nonce)

    def _open(self, voice: VoiceFile) -> bytes:
        key = self.key.unwrap(voice.key, voice.nonce, voice.name)
        return read_recording(self._path(voice.name).read_bytes(), key, voice.name).audio

    async def seal(self, pcm: bytes) -> VoiceFile:
        """Write `pcm` encrypted (off the event loop: up to a megabyte)."""
        return await asyncio.to_thread(self._seal, pcm)

    async def read(self, voice: VoiceFile) -> bytes:
        return await asyncio.to_thread(self._open, voice)

    def remove(self, voice: VoiceFile) -> None:
        with contextlib.suppress(FileNotFoundError):
            self._path(voice.name).unlink()
