"""The telephone with its RTP, prompts and mixing on the service's event loop (``[phone]
media_processes = 0``), on real audio, whatever ``VOLLMOND_TEST_MEDIA_PROCESSES`` says: the
same tests as tests/phone/e2e/test_media_process.py runs on a media process (keys by RFC 4733
and in-band tones, callers at a table hearing each other by day and a muted one not, a night
room, a conference room, a real session's spoken greeting), so that every run of the suite
covers both paths."""

from __future__ import annotations

import pytest

from tests.phone.e2e.both_paths import (
    test_day_voices,
    test_greeting_spoken,
    test_in_band_keys,
    test_night_room,
    test_rfc4733_keys,
    test_room,
)

__all__ = [
    "test_day_voices",
    "test_greeting_spoken",
    "test_in_band_keys",
    "test_night_room",
    "test_rfc4733_keys",
    "test_room",
]


@pytest.fixture
def media_processes() -> int:
    return 0
