"""Voices: text in, 8 kHz int16 speech out, behind one small interface a better voice can replace.

:class:`EspeakVoice` runs Debian's espeak-ng (German or English) and resamples its 22.05 kHz
output to the telephone rate with sox. Speech is rendered once per distinct text and kept in
memory and, optionally, as raw files under a cache directory (key: a hash of the voice's
identity and the text), so a busy server speaks its menus without starting a process.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Final, Protocol

import numpy as np
import numpy.typing as npt

SAMPLE_RATE: Final = 8000
FRAME_SAMPLES: Final = 160

Audio = npt.NDArray[np.int16]


class Voice(Protocol):
    """Anything that turns a sentence into telephone audio (8 kHz, mono, int16)."""

    def render(self, text: str, lang: str) -> Audio:
        """The spoken `text` in `lang` ("de" or "en"); may block (run it off the event loop)."""
        ...


class VoiceUnavailableError(RuntimeError):
    """The speech program is missing or failed; the message says which and why."""


class EspeakVoice:
    """espeak-ng, resampled to 8 kHz by sox; cached in memory and (optionally) on disk."""

    VOICES: Final = {"de": "de", "en": "en"}

    def __init__(
        self,
        cache_dir: Path | None = None,
        *,
        speed_wpm: int = 160,
        memory_items: int = 2000,
        espeak: str = "espeak-ng",
        sox: str = "sox",
    ) -> None:
        self.cache_dir = cache_dir
        self.speed_wpm = speed_wpm
        self.memory_items = memory_items
        self._espeak = shutil.which(espeak)
        self._sox = shutil.which(sox)
        self._memory: OrderedDict[str, Audio] = OrderedDict()
        self._lock = threading.Lock()
        self.renders = 0  # how many times the program actually ran (for tests and metrics)

    def key(self, text: str, lang: str) -> str:
        identity = f"espeak-ng|{self.VOICES.get(lang, lang)}|{self.speed_wpm}|8000|{text}"
        return hashlib.sha256(identity.encode()).hexdigest()

    def render(self, text: str, lang: str) -> Audio:
        key = self.key(text, lang)
        with self._lock:
            cached = self._memory.get(key)
            if cached is not None:
                self._memory.move_to_end(key)
                return cached
        audio = self._from_disk(key)
        if audio is None:
            audio = self._synthesize(text, lang)
            self._to_disk(key, audio)
        with self._lock:
            self._memory[key] = audio
            while len(self._memory) > self.memory_items:
                self._memory.popitem(last=False)
        return audio

    def _from_disk(self, key: str) -> Audio | None:
        if self.cache_dir is None:
            return None
        path = self.cache_dir / f"{key}.s16"
        if not path.exists():
            return None
        return np.frombuffer(path.read_bytes(), dtype=np.int16).copy()

    def _to_disk(self, key: str, audio: Audio) -> None:
        if self.cache_dir is None:
            return
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        path = self.cache_dir / f"{key}.s16"
        # Unique per writer: two callers may render the same new prompt at the same moment.
        partial = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.part")
        partial.write_bytes(audio.astype("<i2").tobytes())
        partial.replace(path)  # atomic: a reader never sees half a prompt

    def _synthesize(self, text: str, lang: str) -> Audio:
        if self._espeak is None or self._sox is None:
            raise VoiceUnavailableError("espeak-ng and sox are needed (Debian packages)")
        voice = self.VOICES.get(lang)
        if voice is None:
            raise VoiceUnavailableError(f"no espeak-ng voice for language {lang!r}")
        wav = subprocess.run(
            [self._espeak, "-v", voice, "-s", str(self.speed_wpm), "--stdout", text],
            capture_output=True,
            check=False,
            timeout=30,
        )
        if wav.returncode != 0 or not wav.stdout:
            raise VoiceUnavailableError(f"espeak-ng failed: {wav.stderr.decode(errors='replace')}")
        raw = subprocess.run(
            [
                self._sox,
                "-t",
                "wav",
                "-",
                "-t",
                "raw",
                "-r",
                "8000",
                "-e",
                "signed",
                "-b",
                "16",
                "-c",
                "1",
                "-L",
                "-",
            ],
            input=wav.stdout,
            capture_output=True,
            check=False,
            timeout=30,
        )
        if raw.returncode != 0:
            raise VoiceUnavailableError(f"sox failed: {raw.stderr.decode(errors='replace')}")
        self.renders += 1
        return np.frombuffer(raw.stdout, dtype="<i2").astype(np.int16)
