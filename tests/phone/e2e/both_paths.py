"""The real-audio tests that run on both media paths (tests/phone/e2e/test_in_process.py and
test_media_process.py import them from here, so the two sets cannot drift apart): keys by
RFC 4733 and in-band tones, callers at a table hearing each other by day and a muted one not,
a night room, a conference room, a real session's spoken greeting."""

from __future__ import annotations

from tests.phone.e2e.test_callers import (
    test_the_greeting_is_heard_and_is_the_spoken_prompt as test_greeting_spoken,
)
from tests.phone.e2e.test_conference_rooms import (
    test_two_callers_in_a_room_hear_each_other_and_a_third_room_hears_nothing as test_room,
)
from tests.phone.e2e.test_keys import (
    test_in_band_key_tones_reach_the_session as test_in_band_keys,
)
from tests.phone.e2e.test_keys import (
    test_rfc4733_keys_from_baresip_reach_the_session as test_rfc4733_keys,
)
from tests.phone.e2e.test_mute import (
    test_a_muted_callers_voice_is_absent_from_the_market_place as test_day_voices,
)
from tests.phone.e2e.test_rooms import (
    test_a_tone_in_one_evil_line_at_night_reaches_only_the_other_evil as test_night_room,
)

__all__ = [
    "test_day_voices",
    "test_greeting_spoken",
    "test_in_band_keys",
    "test_night_room",
    "test_rfc4733_keys",
    "test_room",
]
