"""Shared test setup."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=25, deadline=None)
settings.load_profile("ci")


# The longest files, measured with `--durations` under the whole suite (seconds, rounded;
# session 3, before the browser tests ran apart), heaviest first. Under `--dist loadfile` a
# worker takes whole files in collection order, so a two-minute file collected last ran alone
# at the end while the other workers sat idle; sent first, the long files overlap and the
# short ones fill the gaps (longest job first). This only orders the tests; every test still
# runs, and a file missing here keeps its place.
HEAVY_FILES: dict[str, int] = {
    "tests/phone/e2e/test_day_call.py": 130,
    "tests/service/test_restart.py": 128,
    "tests/browser/test_accessibility.py": 125,
    "tests/browser/test_game.py": 108,
    "tests/browser/test_moments.py": 105,
    "tests/browser/test_day.py": 95,
    "tests/browser/test_after_game.py": 91,
    "tests/browser/test_account_seat.py": 84,
    "tests/phone/e2e/test_seconds_to_seat.py": 80,
    "tests/browser/test_moves.py": 78,
    "tests/engine/test_properties.py": 62,
    "tests/phone/e2e/test_silence_and_seat_code.py": 61,
    "tests/browser/test_rulesets.py": 61,
    "tests/phone/e2e/test_rulesets.py": 55,
    "tests/phone/e2e/test_recording.py": 55,
    "tests/phone/e2e/test_full_game.py": 55,
    "tests/browser/test_reload.py": 55,
    "tests/browser/test_turn_and_keyboard.py": 53,
    "tests/phone/e2e/test_callers.py": 48,
    "tests/phone/e2e/test_moderation_chain.py": 43,
    "tests/service/test_chat.py": 42,
    "tests/browser/test_phone_layout.py": 40,
    "tests/browser/test_retry.py": 38,
    "tests/voice/test_chromium_voice.py": 30,
    "tests/service/test_presence.py": 30,
    "tests/phone/test_sip_fuzz.py": 30,
    "tests/service/test_release.py": 28,
    "tests/browser/test_lobby.py": 26,
    "tests/browser/test_recording_mark.py": 19,
    "tests/browser/test_moderation_console.py": 18,
    "tests/bots/test_table.py": 17,
    "tests/bots/test_smart_bot.py": 17,
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def weight(item: pytest.Item) -> int:
        return -HEAVY_FILES.get(item.nodeid.split("::", 1)[0], 0)

    items.sort(key=weight)  # stable: a file's tests stay together and in order
