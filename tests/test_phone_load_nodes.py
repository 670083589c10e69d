"""`benchmarks.phone_load --nodes`: who founds which game, who dials which node, and the nodes'
figures pooled as one server's (the benchmark itself is never a timed test)."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.phone_load import caller_codes, game_plan, on_node, pool


def test_every_caller_has_a_seat_in_a_game_founded_on_one_node() -> None:
    plan = game_plan(30, 9)
    assert plan == [8, 8, 8, 6]  # house 1 of each game is the silent host
    founders = [set(on_node(i, 3, len(plan))) for i in range(3)]
    assert set.union(*founders) == set(range(len(plan)))
    assert sum(len(f) for f in founders) == len(plan)
    codes = caller_codes(["a", "b", "c", "d"], plan)
    assert codes == ["a"] * 8 + ["b"] * 8 + ["c"] * 8 + ["d"] * 6


def test_most_callers_land_on_a_node_that_does_not_own_their_game() -> None:
    plan = game_plan(90, 9)
    game_of = [g for g, taking in enumerate(plan) for _ in range(taking)]
    dials = {j: i for i in range(3) for j in on_node(i, 3, 90)}
    assert sorted(dials) == list(range(90))
    on_owner = sum(1 for j, g in enumerate(game_of) if dials[j] == g % 3)
    assert 0.25 < on_owner / 90 < 0.42  # about one in three


def _node(lateness: list[float], cpu: float, calls: int, due: int, sent: int) -> dict[str, Any]:
    return {
        "lateness": lateness,
        "deviations": [0.0] * len(lateness),
        "cpu_s": cpu,
        "seconds": 10.0,
        "calls_sending": calls,
        "frames_due": due,
        "frames_sent": sent,
        "calls_up": calls,
        "relay_underruns": 1,
        "key_latency": [],
        "cpu_share": cpu / 10.0,
        "late_p99_ms": 1000 * max(lateness),
    }


def test_the_nodes_figures_pool_every_packet_and_sum_the_frames() -> None:
    fast = _node([0.001] * 98, cpu=1.0, calls=2, due=100, sent=98)
    slow = _node([0.050] * 2, cpu=3.0, calls=2, due=100, sent=2)
    pooled = pool([fast, slow])
    assert pooled["frames_not_sent"] == 200 - 100  # a frame not sent on any node fails
    assert pooled["cpu_share"] == pytest.approx(0.4)  # cores, summed over the nodes
    assert pooled["cpu_per_call_pct"] == pytest.approx(10.0)
    assert pooled["late_p50_ms"] == pytest.approx(1.0)
    assert pooled["late_max_ms"] == pytest.approx(50.0)
    assert pooled["relay_underruns"] == 2
    assert [n["calls_up"] for n in pooled["per_node"]] == [2, 2]
