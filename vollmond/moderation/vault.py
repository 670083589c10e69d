"""Encryption at rest of recordings (O3): AES-GCM, a fresh key per recording, wrapped by a
service key that lives in a file outside the database.

Whoever steals the database gets only wrapped keys; whoever steals the recordings directory
gets only ciphertext. A recording file is::

    MAGIC | frame* ,  frame = length (4 bytes, big-endian) | AES-GCM ciphertext

Frame *n* is sealed with nonce ``n (8 bytes) | final flag (4 bytes)`` and the recording id
as associated data, so frames cannot be reordered, moved to another recording, or cut off
unnoticed (a file without its final frame reads as incomplete). Inside a frame are records
``kind (1) | offset in ms (4) | length (4) | payload``: 8 kHz 16-bit mono PCM, chat lines
(JSON), and the end mark.
"""

from __future__ import annotations

import enum
import hashlib
import json
import os
import secrets
import stat
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from vollmond.moderation.errors import RecordingDamagedError, VaultKeyError

KEY_BYTES = 32
NONCE_BYTES = 12
MAGIC = b"VMREC\x01"
SAMPLE_RATE = 8000
SAMPLE_BYTES = 2
# About two seconds of audio per sealed frame: a crash loses at most that, and the per-frame
# overhead (4 + 16 bytes) stays negligible.
DEFAULT_FRAME_BYTES = 2 * SAMPLE_RATE * SAMPLE_BYTES
_LENGTH = struct.Struct(">I")
_RECORD = struct.Struct(">BII")
_MAX_FRAME = 1 << 24


class RecordKind(enum.IntEnum):
    AUDIO = 1
    CHAT = 2
    END = 3


@dataclass(frozen=True, slots=True)
class ServiceKey:
    """The key that wraps every recording key; never stored in the database."""

    secret: bytes

    @property
    def fingerprint(self) -> str:
        """Names the key in each recording's metadata, so a wrong key file is recognised as
        such instead of every recording looking damaged."""
        return hashlib.sha256(b"vollmond-vault" + self.secret).hexdigest()[:16]

    def wrap(self, recording_key: bytes, recording_id: str) -> tuple[bytes, bytes]:
        """(wrapped key, nonce) for storing beside the recording's metadata."""
        nonce = secrets.token_bytes(NONCE_BYTES)
        return AESGCM(self.secret).encrypt(nonce, recording_key, recording_id.encode()), nonce

    def unwrap(self, wrapped: bytes, nonce: bytes, recording_id: str) -> bytes:
        try:
            return AESGCM(self.secret).decrypt(nonce, wrapped, recording_id.encode())
        except InvalidTag:
            raise RecordingDamagedError(
                f"the key of recording {recording_id} does not open with this service key"
            ) from None


def load_service_key(path: Path) -> ServiceKey:
    """Read the service key at `path`, creating it (0600, O_EXCL) on first use.

    O_EXCL makes two processes starting together agree on one key instead of each writing
    its own; a key file readable by group or others is refused rather than trusted.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass
    else:
        with os.fdopen(fd, "wb") as f:
            f.write(secrets.token_bytes(KEY_BYTES))
            f.flush()
            os.fsync(f.fileno())
    try:
        mode = path.stat().st_mode
        secret = path.read_bytes()
    except OSError as exc:
        raise VaultKeyError(f"cannot read the recording service key {path}: {exc}") from exc
    if stat.S_IMODE(mode) & 0o077:
        raise VaultKeyError(f"{path} is readable by others; chmod 600 it")
    if len(secret) != KEY_BYTES:
        raise VaultKeyError(f"{path} holds {len(secret)} bytes, a service key has {KEY_BYTES}")
    return ServiceKey(secret)


def _nonce(counter: int, final: bool) -> bytes:
    return struct.pack(">QI", counter, int(final))


def _aad(recording_id: str) -> bytes:
    return MAGIC + recording_id.encode()


class RecordingWriter:
    """Appends audio and chat to one encrypted recording file, frame by frame.

    Synchronous on purpose: the mixer calls it every 20 ms from its own clock, and a sealed
    frame is one small write. Open with :meth:`create`; :meth:`close` seals the final frame.
    """

    def __init__(
        self, path: Path, key: bytes, recording_id: str, frame_bytes: int = DEFAULT_FRAME_BYTES
    ) -> None:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        self._file = os.fdopen(fd, "wb")
        self._file.write(MAGIC)
        self._aead = AESGCM(key)
        self._aad = _aad(recording_id)
        self._frame_bytes = frame_bytes
        self._buffer = bytearray()
        self._counter = 0
        self._samples = 0
        self.recording_id = recording_id
        self.path = path
        self.closed = False

    @property
    def position_ms(self) -> int:
        """How much audio is recorded so far; chat lines are stamped with it."""
        return self._samples * 1000 // SAMPLE_RATE

    def write_audio(self, pcm: bytes) -> None:
        """Append 8 kHz signed 16-bit little-endian mono samples (the mixer's frames)."""
        if len(pcm) % SAMPLE_BYTES:
            raise ValueError("PCM must be whole 16-bit samples")
        self._add(RecordKind.AUDIO, pcm)
        self._samples += len(pcm) // SAMPLE_BYTES

    def write_chat(self, speaker: str, text: str) -> None:
        """Append one chat line of a recorded room, stamped with the current audio position."""
        self._add(RecordKind.CHAT, json.dumps({"speaker": speaker, "text": text}).encode())

    def _add(self, kind: RecordKind, payload: bytes) -> None:
        if self.closed:
            raise ValueError("the recording is closed")
        self._buffer += _RECORD.pack(kind, self.position_ms, len(payload)) + payload
        if len(self._buffer) >= self._frame_bytes:
            self._seal(final=False)

    def _seal(self, *, final: bool) -> None:
        sealed = self._aead.encrypt(_nonce(self._counter, final), bytes(self._buffer), self._aad)
        self._file.write(_LENGTH.pack(len(sealed)) + sealed)
        self._counter += 1
        self._buffer.clear()

    def close(self) -> None:
        """Seal the rest with the end mark; the file is complete only after this."""
        if self.closed:
            return
        self._buffer += _RECORD.pack(RecordKind.END, self.position_ms, 0)
        self._seal(final=True)
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        self.closed = True


@dataclass(frozen=True, slots=True)
class ChatLine:
    at_ms: int
    speaker: str
    text: str


@dataclass(frozen=True, slots=True)
class RecordingContent:
    """A decrypted recording; `complete` is False if the service stopped before closing it."""

    audio: bytes
    chat: tuple[ChatLine, ...]
    complete: bool

    @property
    def duration_s(self) -> float:
        return len(self.audio) / (SAMPLE_RATE * SAMPLE_BYTES)


def _frames(data: bytes) -> Iterator[bytes]:
    if not data.startswith(MAGIC):
        raise RecordingDamagedError("not a vollmond recording")
    at = len(MAGIC)
    while at < len(data):
        if at + _LENGTH.size > len(data):
            raise RecordingDamagedError("recording ends inside a frame header")
        (length,) = _LENGTH.unpack_from(data, at)
        at += _LENGTH.size
        if length > _MAX_FRAME or at + length > len(data):
            raise RecordingDamagedError("recording ends inside a frame")
        yield data[at : at + length]
        at += length


def _records(plain: bytes) -> Iterator[tuple[RecordKind, int, bytes]]:
    at = 0
    while at < len(plain):
        kind, offset, length = _RECORD.unpack_from(plain, at)
        at += _RECORD.size
        yield RecordKind(kind), offset, plain[at : at + length]
        at += length


def read_recording(data: bytes, key: bytes, recording_id: str) -> RecordingContent:
    """Decrypt and parse a recording file's bytes; RecordingDamagedError if any frame fails."""
    aead = AESGCM(key)
    aad = _aad(recording_id)
    audio = bytearray()
    chat: list[ChatLine] = []
    complete = False
    for counter, sealed in enumerate(_frames(data)):
        if complete:
            raise RecordingDamagedError("data after the end of the recording")
        plain = _open_frame(aead, counter, sealed, aad)
        complete = plain.final
        for kind, offset, payload in _records(plain.data):
            if kind is RecordKind.AUDIO:
                audio += payload
            elif kind is RecordKind.CHAT:
                line = json.loads(payload)
                chat.append(ChatLine(offset, str(line["speaker"]), str(line["text"])))
    return RecordingContent(bytes(audio), tuple(chat), complete)


@dataclass(frozen=True, slots=True)
class _Plain:
    data: bytes
    final: bool


def _open_frame(aead: AESGCM, counter: int, sealed: bytes, aad: bytes) -> _Plain:
    for final in (False, True):
        try:
            return _Plain(aead.decrypt(_nonce(counter, final), sealed, aad), final)
        except InvalidTag:
            continue
    raise RecordingDamagedError(f"frame {counter} fails authentication")
