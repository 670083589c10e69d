"""A node dies and another takes its games over through the store's leases (issue 15).

Two real `vollmond serve --nats-url ... --ownership leases --lease-ttl 3` nodes on one
PostgreSQL schema and the real NATS server. A game is founded on node a (a holds its lease)
with seats on both nodes; a is SIGKILLed mid-night. Node b takes the game over (its lease, a
new epoch) within 10 s and resumes it from the log; the player on b goes on playing (its
command reaches the new owner), the players of a reconnect to b, the night timer (resumed from
the log) ends the night, and every seat sees every event it may see once, in log order.
"""

from __future__ import annotations

import asyncio
import signal
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from vollmond.store.leases import Lease

from .process import (
    Browser,
    Player,
    ServerProcess,
    assert_each_seat_saw_its_log,
    nats_node,
    start_one_deployment,
    wait_for_lease,
)

NODES = ("a", "b")
LEASE_TTL_S = 3.0
TAKEOVER_LIMIT_S = 10.0
NIGHT_S = 40.0  # the set-up and the takeover fit in it on a loaded machine; then it ends


def _options() -> dict[str, Any]:
    return {
        "size": 4,
        "world": "werwolf",
        "deck": "auto",
        "durations": {"night_s": NIGHT_S, "morning_s": 90.0, "day_s": 90.0},
        "calls": {"enabled": True, "ring_s": 30.0, "max_duration_s": 120.0, "per_night": 3},
    }


def _node(
    tmp_path: Path, node: str, schema: str | None, namespace: str, ttl_s: float = LEASE_TTL_S
) -> ServerProcess:
    return nats_node(
        tmp_path,
        node,
        NODES,
        namespace=namespace,
        schema=schema,
        extra_args=["--ownership", "leases", "--lease-ttl", str(ttl_s)],
    )


async def _owned_by(server: ServerProcess, game: str, node: str, within_s: float) -> Lease:
    return await wait_for_lease(server, game, lambda lease: lease.owner == node, within_s)


async def _play_on(player: Player, evil: list[Player], village: list[Player]) -> dict[str, Any]:
    """A command this seat may give at night: the night room's chat, or a call."""
    if player in evil:
        return await player.command(type="Say", text="Weiter geht's.")
    callee = next(p for p in village if p is not player)
    return await player.command(type="PlaceCall", callee=callee.seat)


@pytest.mark.parametrize("database", ["postgresql"], indirect=True)
async def test_a_dead_nodes_game_goes_on_on_the_other_node(
    tmp_path: Path, database: tuple[str, str | None]
) -> None:
    _, schema = database
    namespace = f"test{uuid.uuid4().hex}"
    a, b = servers = [_node(tmp_path, node, schema, namespace) for node in NODES]
    browsers: list[Browser] = []
    players: list[Player] = []
    try:
        await start_one_deployment(servers)

        browsers = [Browser(servers[i % 2]) for i in range(4)]
        for i, browser in enumerate(browsers):
            await browser.signup(f"failover{i + 1}")
        game, token = await browsers[0].found(**_options())
        tokens = [token] + [await browser.join(game) for browser in browsers[1:]]
        players = [Player(game, t) for t in tokens]
        for i, player in enumerate(players):
            await player.connect(servers[i % 2])
        on_b = [p for i, p in enumerate(players) if i % 2 == 1]
        on_a = [p for p in players if p not in on_b]
        before = await a.lease(game)
        assert before is not None and before.owner == "a"

        members = next(p.view["night_room"]["members"] for p in players if p.view["night_room"])
        evil = [p for p in players if p.seat in members]
        village = [p for p in players if p not in evil]
        await evil[0].command(type="UseAbility", kind="evil_vote", target=village[0].seat)

        killed = time.monotonic()
        a.kill(signal.SIGKILL)
        acked = await _play_on(on_b[0], evil, village)  # waits for the new owner
        answered_s = time.monotonic() - killed
        after = await _owned_by(b, game, "b", TAKEOVER_LIMIT_S)
        taken_s = time.monotonic() - killed
        print(
            f"\nfailover (lease ttl {LEASE_TTL_S} s): the command sent at the kill answered "
            f"after {answered_s:.2f} s; lease on b seen after {taken_s:.2f} s"
        )
        assert after.epoch > before.epoch
        assert answered_s < TAKEOVER_LIMIT_S
        assert acked["type"] == "ack" and acked["seq"] > 0

        for player in on_a:  # their node is gone: back with their token, after their last seq
            await player.close()
            await player.connect(b)

        # The night timer, resumed from the log on b, ends the night for everyone.
        for player in players:
            await player.expect("event", timeout=NIGHT_S + 60, code="morning_report")
        await assert_each_seat_saw_its_log(b, players, lambda _: "")
        assert "lease_acquired" in b.log_text() or "lease_taken_over" in b.log_text()
    finally:
        for player in players:
            await player.close()
        for browser in browsers:
            await browser.close()
        for server in servers:
            server.kill(signal.SIGTERM)


CLEAN_TTL_S = 10.0  # long, so a takeover that waited for the expiry would show


@pytest.mark.parametrize("database", ["postgresql"], indirect=True)
async def test_a_node_stopped_cleanly_hands_its_game_on_at_once(
    tmp_path: Path, database: tuple[str, str | None]
) -> None:
    """SIGTERM instead of SIGKILL: node a stops its actors, closes its log writer, then expires
    its leases and tells node b, which takes the game over at once — well within the lease's
    time-to-live (10 s here), where a killed node's game waits for the expiry. The player on b
    sends a command at the signal; it is answered by b. Every seat then sees its log once."""
    _, schema = database
    namespace = f"test{uuid.uuid4().hex}"
    a, b = servers = [_node(tmp_path, node, schema, namespace, CLEAN_TTL_S) for node in NODES]
    browsers: list[Browser] = []
    players: list[Player] = []
    try:
        await start_one_deployment(servers)
        browsers = [Browser(servers[i % 2]) for i in range(4)]
        for i, browser in enumerate(browsers):
            await browser.signup(f"handon{i + 1}")
        game, token = await browsers[0].found(**_options())
        tokens = [token] + [await browser.join(game) for browser in browsers[1:]]
        players = [Player(game, t) for t in tokens]
        for i, player in enumerate(players):
            await player.connect(servers[i % 2])
        on_b = [p for i, p in enumerate(players) if i % 2 == 1]
        on_a = [p for p in players if p not in on_b]
        before = await a.lease(game)
        assert before is not None and before.owner == "a"
        members = next(p.view["night_room"]["members"] for p in players if p.view["night_room"])
        evil = [p for p in players if p.seat in members]
        village = [p for p in players if p not in evil]

        assert a.process is not None
        stopped = time.monotonic()
        a.process.send_signal(signal.SIGTERM)  # not waited for: the loop goes on meanwhile
        while a.process.poll() is None:
            await asyncio.sleep(0.02)
        exited_s = time.monotonic() - stopped
        acked = await _play_on(on_b[0], evil, village)  # a is gone: b answers it
        answered_s = time.monotonic() - stopped
        after = await _owned_by(b, game, "b", CLEAN_TTL_S)
        taken_s = time.monotonic() - stopped
        a.kill(signal.SIGTERM)  # reaped
        print(
            f"\nclean stop (lease ttl {CLEAN_TTL_S} s): node a exited {exited_s:.2f} s after "
            f"SIGTERM; a command sent then was answered by b after {answered_s:.2f} s; the "
            f"lease on b seen after {taken_s:.2f} s"
        )
        assert acked["type"] == "ack" and acked["seq"] > 0
        assert after.epoch == before.epoch + 1
        assert answered_s < CLEAN_TTL_S / 2 and taken_s < CLEAN_TTL_S / 2
        assert "leases_handed_on" in a.log_text()

        for player in on_a:
            await player.close()
            await player.connect(b)
        await assert_each_seat_saw_its_log(b, players, lambda _: "")
    finally:
        for player in players:
            await player.close()
        for browser in browsers:
            await browser.close()
        for server in servers:
            server.kill(signal.SIGTERM)
