"""Shared test setup."""

from __future__ import annotations

import json
import os
import resource
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.cheap_hashing import use_cheap_hashing

use_cheap_hashing()

settings.register_profile(
    "ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=25, deadline=None)
settings.load_profile("ci")


# The longest files, measured with `--durations` under the whole suite (seconds, rounded;
# session 4, with the browser tests beside the rest), heaviest first. Under `--dist loadfile` a
# worker takes whole files in collection order, so a two-minute file collected last ran alone
# at the end while the other workers sat idle; sent first, the long files overlap and the
# short ones fill the gaps (longest job first). This only orders the tests; every test still
# runs, and a file missing here keeps its place.
HEAVY_FILES: dict[str, int] = {
    "tests/service/test_lobby.py": 243,
    "tests/service/test_ws.py": 169,
    "tests/service/test_web_edge.py": 168,
    "tests/service/test_accounts.py": 138,
    "tests/browser/test_game.py": 130,
    "tests/service/test_restart.py": 113,
    "tests/store/test_store_phone.py": 110,
    "tests/browser/test_turn_and_keyboard.py": 110,
    "tests/phone/e2e/test_day_call.py": 104,
    "tests/service/test_presence.py": 91,
    "tests/service/test_private.py": 81,
    "tests/browser/test_standard_bots.py": 60,
    "tests/store/test_store_accounts.py": 60,
    "tests/voice/test_browser_voice.py": 57,
    "tests/phone/e2e/test_silence_and_seat_code.py": 57,
    "tests/phone/e2e/test_callers.py": 55,
    "tests/phone/e2e/test_rulesets.py": 55,
    "tests/phone/e2e/test_seconds_to_seat.py": 54,
    "tests/browser/test_moments.py": 53,
    "tests/browser/test_rulesets.py": 52,
    "tests/phone/e2e/test_full_game.py": 51,
    "tests/browser/test_moves.py": 50,
    "tests/service/test_moderation_enforce.py": 49,
    "tests/browser/test_after_game.py": 48,
    "tests/browser/test_accessibility.py": 47,
    "tests/service/test_moderation_api.py": 45,
    "tests/service/test_at_rest.py": 42,
    "tests/phone/e2e/test_recording.py": 42,
    "tests/moderation/test_cli.py": 41,
    "tests/browser/test_day.py": 41,
    "tests/service/test_rulesets.py": 35,
    "tests/phone/session/test_identity.py": 32,
    "tests/service/test_client_api.py": 28,
    "tests/service/test_chat.py": 28,
    "tests/voice/test_chromium_voice.py": 28,
    "tests/service/test_web_names.py": 27,
    "tests/phone/e2e/test_moderation_chain.py": 26,
    "tests/service/test_after_game_chat.py": 26,
    "tests/engine/test_properties.py": 24,
    "tests/phone/test_sip_message.py": 24,
    "tests/phone/e2e/test_robustness.py": 24,
    "tests/moderation/test_phone_enforce.py": 22,
    "tests/service/test_release.py": 21,
    "tests/store/test_store_ledgers.py": 21,
    "tests/browser/test_moderation_console.py": 21,
    "tests/service/test_web_access.py": 20,
    "tests/browser/test_account.py": 20,
    "tests/service/test_phone_link.py": 20,
    "tests/service/test_ws_fuzz.py": 19,
    "tests/service/test_web_sessions.py": 19,
    "tests/store/test_store_gamelog.py": 18,
    "tests/browser/test_reload.py": 18,
    "tests/browser/test_account_seat.py": 17,
    "tests/browser/test_errors.py": 17,
    "tests/service/test_account_seats.py": 17,
    "tests/phone/session/test_menu.py": 16,
    "tests/browser/test_recording_mark.py": 16,
    "tests/browser/test_front.py": 16,
    "tests/phone/e2e/test_rooms.py": 16,
    "tests/voice/test_console_listen.py": 15,
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def weight(item: pytest.Item) -> int:
        return -HEAVY_FILES.get(item.nodeid.split("::", 1)[0], 0)

    items.sort(key=weight)  # stable: a file's tests stay together and in order


# -- where the suite's CPU goes ------------------------------------------------------------------
# With VOLLMOND_CPU_REPORT=<dir>, every worker appends one JSON line per test: wall seconds and
# the CPU seconds of the worker (all its threads) and of the child processes it reaped during
# the test (servers, baresip, sipp; a browser is reaped when its module ends). The suite has
# two cores in CI: its length is bound by CPU, not by waiting (scripts/cpu_report.py sums it).
_CPU_REPORT = os.environ.get("VOLLMOND_CPU_REPORT")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    if not _CPU_REPORT:
        yield
        return
    wall, own, children = time.monotonic(), time.process_time(), _children_cpu()
    yield
    line = {
        "test": item.nodeid,
        "wall": round(time.monotonic() - wall, 3),
        "cpu": round(time.process_time() - own, 3),
        "children": round(_children_cpu() - children, 3),
    }
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(Path(_CPU_REPORT) / f"{worker}.jsonl", "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime
