"""Telephone prompts: voices (espeak-ng by default), call-progress tones and the prompt queue."""

from vollmond.phone.session.prompts import tones
from vollmond.phone.session.prompts.prewarm import prewarm, static_prompts
from vollmond.phone.session.prompts.queue import (
    Line,
    Live,
    Priority,
    PromptQueue,
    Spoken,
    Utterance,
)
from vollmond.phone.session.prompts.renderer import Renders
from vollmond.phone.session.prompts.voice import (
    FRAME_SAMPLES,
    SAMPLE_RATE,
    Audio,
    EspeakVoice,
    Voice,
    VoiceUnavailableError,
)

__all__ = [
    "FRAME_SAMPLES",
    "SAMPLE_RATE",
    "Audio",
    "EspeakVoice",
    "Line",
    "Live",
    "Priority",
    "PromptQueue",
    "Renders",
    "Spoken",
    "Utterance",
    "Voice",
    "VoiceUnavailableError",
    "prewarm",
    "static_prompts",
    "tones",
]
