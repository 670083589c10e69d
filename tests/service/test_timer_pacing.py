"""Timers that come due together fire a few at a time, and what else the loop has to do runs
between them (vollmond/service/timer_pacing.py)."""

from __future__ import annotations

import asyncio

import pytest

from vollmond.service.timer_pacing import TimerPacer

HERD = 200


async def _herd(pacer: TimerPacer | None, order: list[str]) -> None:
    """HERD timers due at one moment, and a player's command that arrives as the first fires
    (its socket read is ready then): where does the command come in the order?"""
    loop = asyncio.get_running_loop()
    done = asyncio.Event()
    fired = 0

    def timer(i: int) -> None:
        nonlocal fired
        order.append(f"timer {i}")
        fired += 1
        if i == 0:
            loop.call_soon(order.append, "command")
        if fired == HERD:
            done.set()

    def due(i: int) -> None:
        if pacer is None:
            timer(i)
        else:
            pacer.fire(lambda: timer(i))

    at = loop.time() + 0.05
    for i in range(HERD):  # a nanosecond apart: the loop's timer heap keeps no order for ties
        loop.call_at(at + i * 1e-9, due, i)
    await asyncio.wait_for(done.wait(), 10)
    await asyncio.sleep(0)  # the command, if it is still behind the last timer


async def test_without_pacing_a_command_waits_for_the_whole_herd() -> None:
    order: list[str] = []
    await _herd(None, order)
    assert order.index("command") == HERD  # the reference: behind every timer


async def test_a_command_comes_in_after_the_first_slot_of_the_herd() -> None:
    order: list[str] = []
    pacer = TimerPacer(slot_s=0.02, per_slot=4, spread_s=1.0)
    await _herd(pacer, order)
    assert order.index("command") == 4
    timers = [entry for entry in order if entry != "command"]
    assert timers == [f"timer {i}" for i in range(HERD)]  # all fired, in the order due
    assert pacer.deferred == HERD - 4


async def test_a_herd_of_any_size_is_through_in_about_the_spread() -> None:
    loop = asyncio.get_running_loop()
    pacer = TimerPacer(slot_s=0.02, per_slot=4, spread_s=0.5)
    fired: list[float] = []
    started = loop.time()
    for _ in range(2000):
        pacer.fire(lambda: fired.append(loop.time()))
    while len(fired) < 2000:
        await asyncio.sleep(0.01)
    # 2,000 at four a slot would take ten seconds; the slots take more as the queue grows.
    assert fired[-1] - started < 0.5 + 0.3
    assert len([t for t in fired if t - started < 0.02]) == 4


async def test_few_timers_fire_at_once_and_nothing_waits() -> None:
    pacer = TimerPacer(slot_s=0.02, per_slot=4)
    fired: list[int] = []
    for i in range(4):
        pacer.fire(lambda i=i: fired.append(i))  # type: ignore[misc]
    assert fired == [0, 1, 2, 3]  # synchronously, inside `fire`
    assert pacer.deferred == 0


async def test_a_failing_timer_does_not_hold_back_the_ones_behind_it() -> None:
    pacer = TimerPacer(slot_s=0.01, per_slot=1)
    fired: list[int] = []

    def fails() -> None:
        raise RuntimeError("on purpose")

    pacer.fire(lambda: fired.append(0))
    pacer.fire(fails)
    pacer.fire(lambda: fired.append(2))
    for _ in range(100):
        if fired == [0, 2]:
            break
        await asyncio.sleep(0.01)
    assert fired == [0, 2]


async def test_closing_drops_what_waits() -> None:
    pacer = TimerPacer(slot_s=0.01, per_slot=1)
    fired: list[int] = []
    for i in range(3):
        pacer.fire(lambda i=i: fired.append(i))  # type: ignore[misc]
    pacer.close()
    await asyncio.sleep(0.05)
    assert fired == [0]


@pytest.mark.parametrize("per_slot", [1, 4])
async def test_timers_due_later_than_a_herd_still_come_in_order(per_slot: int) -> None:
    pacer = TimerPacer(slot_s=0.01, per_slot=per_slot)
    fired: list[int] = []
    for i in range(10):
        pacer.fire(lambda i=i: fired.append(i))  # type: ignore[misc]
    await asyncio.sleep(0.015)
    pacer.fire(lambda: fired.append(10))  # due while the herd is still waiting: behind it
    while len(fired) < 11:
        await asyncio.sleep(0.005)
    assert fired == list(range(11))
