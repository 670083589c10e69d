"""The telephone service's voice: espeak-ng by default, recorded prompts where an operator has
them, and the Voice interface.

Synthetic speech is cached under ``<data-dir>/prompts`` (rendered once per text, shared by every
call of the node). An operator may drop recordings into ``<data-dir>/voice/<code>.wav`` (any
sample rate, mono or stereo): a fixed prompt whose message code has a recording is played from
it instead of the synthetic voice. ``vollmond prompts export`` lists every code and its text for
a speaker to record.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vollmond.phone.session.prompts.prewarm import static_prompt_codes
from vollmond.phone.session.prompts.voice import (
    Audio,
    EspeakVoice,
    Voice,
    VoiceUnavailableError,
)

__all__ = [
    "EspeakVoice",
    "RecordedVoice",
    "Voice",
    "VoiceUnavailableError",
    "default_voice",
]

log = logging.getLogger(__name__)

CACHE_ENV = "VOLLMOND_PROMPT_CACHE"
"""Overrides where synthetic prompts are cached (default ``<data-dir>/prompts``)."""


@dataclass
class RecordedVoice:
    """Recorded prompt files by message code, falling back to another voice for every text
    without a recording (game news, prompts with numbers in them)."""

    fallback: Voice
    directory: Path
    sox: str = "sox"

    def __post_init__(self) -> None:
        self._codes: dict[str, Mapping[str, str]] = {}
        self._loaded: dict[Path, Audio] = {}
        self._lock = threading.Lock()
        self._sox = shutil.which(self.sox)

    def render(self, text: str, lang: str) -> Audio:
        path = self.recording_for(text, lang)
        if path is not None:
            try:
                return self._load(path)
            except VoiceUnavailableError:
                log.exception("recorded_prompt_unreadable path=%s", path)
        return self.fallback.render(text, lang)

    def recording_for(self, text: str, lang: str) -> Path | None:
        """The file that replaces `text`, if the operator recorded its code. German files
        are ``<code>.wav``, other languages ``<code>.<lang>.wav``."""
        codes = self._codes.get(lang)
        if codes is None:
            codes = {prompt: code for code, prompt in static_prompt_codes(lang).items()}
            self._codes[lang] = codes
        code = codes.get(text)
        if code is None:
            return None
        name = f"{code}.wav" if lang == "de" else f"{code}.{lang}.wav"
        path = self.directory / name
        return path if path.is_file() else None

    def _load(self, path: Path) -> Audio:
        with self._lock:
            cached = self._loaded.get(path)
        if cached is not None:
            return cached
        if self._sox is None:
            raise VoiceUnavailableError("sox is needed to play recorded prompts")
        to_raw = ["-t", "raw", "-r", "8000", "-e", "signed", "-b", "16", "-c", "1", "-L", "-"]
        raw = subprocess.run(
            [self._sox, str(path), *to_raw],
            capture_output=True,
            check=False,
            timeout=30,
        )
        if raw.returncode != 0 or not raw.stdout:
            raise VoiceUnavailableError(f"sox failed on {path}: {raw.stderr.decode()}")
        audio = np.frombuffer(raw.stdout, dtype="<i2").astype(np.int16)
        with self._lock:
            self._loaded[path] = audio
        return audio


def default_voice(data_dir: Path | None = None) -> Voice:
    """espeak-ng with its cache in ``<data-dir>/prompts`` (or ``$VOLLMOND_PROMPT_CACHE``),
    behind the operator's recordings in ``<data-dir>/voice``."""
    base = data_dir if data_dir is not None else Path("data")
    cache = Path(os.environ.get(CACHE_ENV, str(base / "prompts")))
    return RecordedVoice(EspeakVoice(cache), base / "voice")
