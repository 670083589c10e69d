"""Shared test setup."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=25, deadline=None)
settings.load_profile("ci")


# The longest files, measured with `--durations` under the whole suite (seconds, rounded),
# heaviest first. Under `-n 4 --dist loadfile` a worker takes whole files in collection order,
# so a two-minute file collected last ran alone at the end while three workers sat idle; sent
# first, the long files overlap and the short ones fill the gaps (longest job first). This
# only orders the tests; every test still runs, and a file missing here keeps its place.
HEAVY_FILES: dict[str, int] = {
    "tests/service/test_restart.py": 150,
    "tests/browser/test_game.py": 127,
    "tests/phone/e2e/test_day_call.py": 108,
    "tests/browser/test_moments.py": 94,
    "tests/browser/test_moves.py": 81,
    "tests/phone/e2e/test_rulesets.py": 69,  # measured alone (not yet under the suite)
    "tests/service/test_presence.py": 67,
    "tests/voice/test_chromium_voice.py": 80,  # 61 measured, + the night test (estimated)
    "tests/browser/test_accessibility.py": 61,
    "tests/browser/test_reload.py": 60,
    "tests/phone/e2e/test_recording.py": 56,
    "tests/browser/test_day.py": 56,
    "tests/phone/e2e/test_callers.py": 54,
    "tests/phone/e2e/test_seconds_to_seat.py": 53,
    "tests/phone/e2e/test_full_game.py": 51,
    "tests/browser/test_account_seat.py": 51,
    "tests/browser/test_phone_layout.py": 46,
    "tests/engine/test_properties.py": 42,
    "tests/browser/test_retry.py": 39,
    "tests/browser/test_lobby.py": 38,
    "tests/voice/test_chromium_tones.py": 35,  # estimated (17-36 s alone on a loaded machine)
    "tests/service/test_chat.py": 31,
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def weight(item: pytest.Item) -> int:
        return -HEAVY_FILES.get(item.nodeid.split("::", 1)[0], 0)

    items.sort(key=weight)  # stable: a file's tests stay together and in order
