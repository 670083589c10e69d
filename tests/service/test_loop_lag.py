"""Timings in `/metrics`: the event loop's lag — a stall of the loop shows in the served
histogram, in the bucket of its length, and nowhere before it happened
(vollmond/service/loop_lag.py) — and how long a command's log append waited for its commit."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import httpx
from prometheus_client import CollectorRegistry, Histogram
from prometheus_client.parser import text_string_to_metric_families
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from vollmond.engine.standard import UseAbility
from vollmond.engine.standard.queries import night_room
from vollmond.engine.standard.types import ActionKind
from vollmond.service.actor import Accepted
from vollmond.service.config import Settings
from vollmond.service.loop_lag import BUCKETS_S, LoopLag
from vollmond.service.policy import Policy

from .support import running_service
from .wsplay import FAST_POLICY, FOUR_DECK, SLOW, table

STALL_S = 0.3
NAME = "vollmond_event_loop_lag_seconds"


def ticks_at_least(
    metrics_text: str, lag_s: float, name: str = NAME, worker: str | None = None
) -> float:
    """How many ticks came at least `lag_s` late, by the histogram's cumulative buckets (of
    one `worker`'s samples, where `/metrics` answers for several)."""
    below = 0.0
    total = 0.0
    for family in text_string_to_metric_families(metrics_text):
        if family.name != name:
            continue
        for sample in family.samples:
            if worker is not None and sample.labels.get("worker") != worker:
                continue
            if sample.name == f"{name}_count":
                total = sample.value
            elif sample.name == f"{name}_bucket" and float(sample.labels["le"]) < lag_s:
                below = max(below, sample.value)
    return total - below


def _lag_sum(metrics_text: str) -> float:
    """The seconds of lag the served histogram has summed so far."""
    for family in text_string_to_metric_families(metrics_text):
        if family.name == NAME:
            return next(s.value for s in family.samples if s.name == f"{NAME}_sum")
    raise AssertionError("no loop lag in the metrics")


def _histogram() -> Histogram:
    return Histogram("lag_seconds", "test", buckets=BUCKETS_S, registry=CollectorRegistry())


async def test_a_blocked_loop_is_one_late_tick_of_its_length() -> None:
    lag = LoopLag(_histogram(), interval_s=0.02)
    lag.start()
    try:
        await asyncio.sleep(0.1)  # a few ticks on a loop that runs freely
        before = lag.worst_s
        time.sleep(STALL_S)  # holds the loop: the tick due meanwhile runs this much late
        await asyncio.sleep(0.1)
    finally:
        lag.stop()
    assert before < STALL_S - 0.05  # the worst lag so far was not yet the stall
    assert STALL_S - 0.03 <= lag.worst_s < STALL_S + 0.3
    (family,) = lag.histogram.collect()
    over = {float(s.labels["le"]): s.value for s in family.samples if s.name.endswith("_bucket")}
    # One stall is one late tick: the next is due an interval after the late one ran (were
    # it due an interval after the late one was due, the stall would count ~15 times). A
    # second may come from the machine itself, under a whole suite's load.
    assert 1 <= over[float("inf")] - over[0.25] <= 2


async def test_a_stalled_service_loop_shows_in_its_metrics(
    settings_for: Callable[[Policy], Settings], database: tuple[str, str | None]
) -> None:
    async def stall(request: Request) -> Response:
        time.sleep(STALL_S)  # on purpose: a handler that holds the loop
        return PlainTextResponse("stalled")

    settings = settings_for(FAST_POLICY)
    async with (
        running_service(database[0], settings, extra_routes=[Route("/stall", stall)]) as service,
        httpx.AsyncClient(base_url=service.base_url) as http,
    ):
        before = (await http.get("/metrics")).text  # a loaded machine may have stalled it too
        assert (await http.get("/stall")).text == "stalled"
        for _ in range(200):  # the late tick is recorded when it runs; the next ones follow
            text = (await http.get("/metrics")).text
            late = ticks_at_least(text, 0.25) - ticks_at_least(before, 0.25)
            if late >= 1 and ticks_at_least(text, 0.0) >= ticks_at_least(before, 0.0) + 3:
                break
            await asyncio.sleep(0.02)
        assert late >= 1
        assert _lag_sum(text) - _lag_sum(before) >= STALL_S - 0.1  # the stall, at its length
        assert ticks_at_least(text, 0.0) >= ticks_at_least(before, 0.0) + 3  # sampled on


async def test_an_accepted_command_shows_its_log_wait_in_the_metrics(
    settings_for: Callable[[Policy], Settings], database: tuple[str, str | None]
) -> None:
    settings = settings_for(FAST_POLICY)
    async with (
        running_service(database[0], settings) as service,
        httpx.AsyncClient(base_url=service.base_url) as http,
    ):
        game, _ = await table(service, 4, FOUR_DECK, SLOW, calls={"enabled": False})
        waits = "vollmond_log_append_wait_seconds"
        assert ticks_at_least((await http.get("/metrics")).text, 0.0, waits) == 0
        actor = service.hub.actors[game]
        assert actor.state is not None
        evil = sorted(night_room(actor.state))
        target = next(p.seat for p in actor.state.players if p.seat not in evil)
        vote = await actor.submit(UseAbility(evil[0], ActionKind.EVIL_VOTE, target))
        assert isinstance(vote, Accepted)
        assert ticks_at_least((await http.get("/metrics")).text, 0.0, waits) == 1
