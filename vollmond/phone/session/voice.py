"""The default voice for the telephone service (espeak-ng), and the Voice interface."""

from __future__ import annotations

import os
from pathlib import Path

from vollmond.phone.session.prompts.voice import EspeakVoice, Voice, VoiceUnavailableError

__all__ = ["EspeakVoice", "Voice", "VoiceUnavailableError", "default_voice"]

CACHE_ENV = "VOLLMOND_PROMPT_CACHE"


def default_voice() -> Voice:
    """espeak-ng with its prompt cache under ``$VOLLMOND_PROMPT_CACHE`` (default
    ``./data/prompts``): rendered once per text, shared by every call of the node."""
    return EspeakVoice(Path(os.environ.get(CACHE_ENV, "data/prompts")))
