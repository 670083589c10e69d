"""Shared test setup."""

from __future__ import annotations

import asyncio
import json
import os
import resource
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog
from hypothesis import HealthCheck, settings

import tests.prompt_cache  # noqa: F401 - sets VOLLMOND_PROMPT_CACHE for every service started
from tests.cheap_hashing import use_cheap_hashing
from tests.store.templates import drop_lent_schemas
from vollmond.workers import tune_gc

use_cheap_hashing()

# Services started inside the test process log through structlog's default, whose rich
# tracebacks (every frame's locals drawn in boxes) cost tens of milliseconds of the event
# loop each; a loop logging a fault every poll then starved the service it tested on a loaded
# machine. Plain tracebacks say the same. (Services in their own processes log JSON.)
structlog.configure(
    processors=[
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="%H:%M:%S"),
        structlog.dev.ConsoleRenderer(
            colors=False, exception_formatter=structlog.dev.plain_traceback
        ),
    ]
)


settings.register_profile(
    "ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=25, deadline=None)
settings.load_profile("ci")


# The longest files, measured under the whole suite (seconds of test wall time, rounded,
# VOLLMOND_CPU_REPORT: the first run's files in session 14 with six workers, the browser
# table's and the real-audio tests' in session 7), heaviest first. Under
# `--dist loadfile` a worker takes whole files in collection order, so a two-minute file
# collected last ran alone at the end while the other workers sat idle; sent first, the long
# files overlap and the short ones fill the gaps (longest job first). This only orders the
# tests; every test still runs, and the files missing here follow, in collection order.
HEAVY_FILES: dict[str, int] = {
    "tests/browser/test_turn_and_keyboard.py": 122,
    "tests/service/test_restart.py": 109,
    "tests/browser/test_game.py": 108,
    "tests/service/test_failover_mixed.py": 83,
    "tests/phone/e2e/test_ring_alert.py": 78,
    "tests/service/test_workers.py": 76,
    "tests/browser/test_accessibility.py": 66,
    "tests/phone/e2e/test_day_call.py": 65,
    "tests/browser/test_rulesets.py": 63,
    "tests/phone/e2e/test_seconds_to_seat.py": 62,
    "tests/phone/e2e/test_conference_rooms.py": 60,
    "tests/phone/e2e/test_media_process.py": 59,
    "tests/browser/test_after_game.py": 58,
    "tests/browser/test_standard_bots.py": 57,
    "tests/deploy/test_kamailio.py": 55,
    "tests/phone/e2e/test_silence_and_seat_code.py": 55,
    "tests/service/test_failover.py": 55,
    "tests/phone/e2e/test_callers.py": 54,
    "tests/phone/e2e/test_rulesets.py": 54,
    "tests/phone/e2e/test_workers_phone.py": 52,
    "tests/browser/test_moments.py": 51,
    "tests/phone/e2e/test_full_game.py": 50,
    "tests/phone/e2e/test_in_process.py": 50,
    "tests/service/test_nodes_phone.py": 50,
    "tests/service/test_lobby.py": 47,
    "tests/service/test_community_workers.py": 42,
    "tests/phone/e2e/test_recording.py": 41,
    "tests/browser/test_moves.py": 40,
    "tests/service/test_presence.py": 38,
    "tests/service/test_ws.py": 37,
    "tests/voice/test_rooms_workers.py": 37,
    "tests/browser/test_account.py": 36,
    "tests/phone/e2e/test_mailbox_friends.py": 35,
    "tests/service/test_nodes.py": 34,
    "tests/browser/test_moderation_console.py": 33,
    "tests/browser/test_reload.py": 31,
    "tests/service/test_ws_fuzz.py": 30,
    "tests/phone/e2e/test_robustness.py": 29,
    "tests/engine/mayor/test_properties.py": 28,
    "tests/voice/test_browser_voice.py": 26,
    "tests/browser/test_day.py": 24,
    "tests/phone/test_mediaproc.py": 24,
    "tests/service/test_voice_relay.py": 24,
    "tests/browser/test_account_seat.py": 23,
    "tests/browser/test_community.py": 23,
    "tests/engine/test_legal.py": 23,
    "tests/service/test_chat.py": 23,
    "tests/phone/e2e/test_moderation_chain.py": 22,
    "tests/voice/test_chromium_voice.py": 22,
    "tests/service/test_moderation_enforce.py": 21,
    "tests/service/test_web_edge.py": 20,
    "tests/engine/test_properties.py": 18,
    "tests/voice/test_voice_workers.py": 18,
    "tests/service/test_private.py": 17,
    "tests/service/test_workers_shared.py": 17,
    "tests/browser/test_phone_layout.py": 16,
    "tests/service/test_lease_ownership.py": 16,
    "tests/browser/test_retry.py": 15,
    "tests/browser/test_rooms.py": 15,
    "tests/phone/e2e/test_rooms.py": 15,
    "tests/phone/e2e/test_bots_by_phone.py": 14,
    "tests/service/test_accounts.py": 14,
    "tests/service/test_after_game_chat.py": 14,
    "tests/service/test_at_rest.py": 14,
    "tests/service/test_moderation_api.py": 14,
    "tests/browser/test_recording_mark.py": 13,
    "tests/phone/e2e/test_keys.py": 13,
    "tests/service/test_community_api.py": 13,
    "tests/browser/test_errors.py": 12,
    "tests/service/test_release.py": 12,
    "tests/service/test_ws_handoff.py": 12,
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def weight(item: pytest.Item) -> int:
        return -HEAVY_FILES.get(item.nodeid.split("::", 1)[0], 0)

    items.sort(key=weight)  # stable: a file's tests stay together and in order


def pytest_collection_finish(session: pytest.Session) -> None:
    """Each test process collects its garbage as a serving process does (`tune_gc`): what
    exists after collection (the modules, the test items) is frozen out of the collector's
    reach, and the youngest generation is collected less often. Measured in the first run's
    workers (gc callbacks): 26.6 CPU s in the collector of 242 with CPython's defaults, 18.1
    of 269 with these (a tenth and a fifteenth); cycles are still collected, only later."""
    tune_gc()


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


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Each test process drops the PostgreSQL schemas it kept for reuse (tests/store/templates)."""
    asyncio.run(drop_lent_schemas())
