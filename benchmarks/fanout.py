"""The web server's fan-out per command, in one process, on a fixed workload.

    .venv/bin/python -m benchmarks.fanout [--games 20] [--players 10] [--spectators 2]
        [--json-out F]

`benchmarks.ws_load` measures the whole server under an open-loop load, which is the honest
figure but a noisy one on a shared machine: its clients pick random commands, so two runs do
not play the same games, and the server's CPU per command moves with the mix. This benchmark
plays the same bot games every time (standard rules, seeds 0..games-1) through the real
`GameActor` and real browser-socket `Connection`s (batch frames, as the page asks), with a
socket object in place of the network: what it measures is what the server does per command
between the rules and the `write` — the views, their JSON, the events' JSON, the frames and
the writer tasks. Each command of a seat is handed to that seat's socket as the client's
JSON, as a browser sends it; the timers' commands go to the actor.

The log writer is replaced by one that writes nothing, so the store's cost is not in the
figure. Side by side, in the same run, the same games with no socket at all (the rules and
the actor alone): the difference is the fan-out's CPU per command. Counted, not timed:
frames and messages sent per command, and views built per command.

`--heap N` first makes N long-lived objects the collector tracks (a server's sockets and
states are millions); `--tune-gc` applies the server's collector settings (`workers.tune_gc`):
the pair shows what the settings do to the fan-out with a server-sized heap.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path
from typing import Any

from vollmond.engine.core import Viewer
from vollmond.engine.ruleset import get_ruleset
from vollmond.engine.standard import GameOptions
from vollmond.engine.standard.options import Durations
from vollmond.engine.standard.sim import play_game
from vollmond.service.actor import GameActor
from vollmond.service.metrics import Metrics
from vollmond.service.protocol import encode
from vollmond.service.web.connection import Connection
from vollmond.workers import tune_gc
from vollmond.worlds import get_world

from .jsonline import append_json_line

QUIET_DURATIONS = Durations(night_s=3600.0, day_s=3600.0, vote_s=3600.0)
"""Long phases: no timer of the actor fires during a game; the bot game's own timeouts are
commands like the others."""


class _Socket:
    """Keeps what a connection sends (counted after the timed part)."""

    def __init__(self, sent: list[str]) -> None:
        self.sent = sent

    async def send_text(self, text: str) -> None:
        self.sent.append(text)
        text.encode()  # as the ASGI server does; counted after the timed part


class _NoLog:
    """A log writer that writes nothing (the store is not what is measured here)."""

    async def append(self, append: Any) -> None:
        return None


async def _drained(connections: list[Connection]) -> None:
    """Until every writer has sent what it had (a few loop turns)."""
    while any(c._outbox or c._view_dirty for c in connections):
        await asyncio.sleep(0)
    await asyncio.sleep(0)


async def play(seed: int, players: int, spectators: int, sockets: bool) -> dict[str, Any]:
    ruleset = get_ruleset("standard")
    options = GameOptions(players=players, durations=QUIET_DURATIONS)
    commands = play_game(options, seed).commands
    sent: list[str] = []
    tally = {"frames": 0, "messages": 0, "bytes": 0, "views": 0, "commands": 0}
    actor = GameActor(f"g{seed}", ruleset, options, seed, sessions=None)  # type: ignore[arg-type]
    opened = ruleset.new_game(options, ruleset.rng_for(seed, 0))
    actor.state, actor.next_event_seq = opened.state, 1 + len(opened.events)
    actor.writer = _NoLog()  # type: ignore[assignment]
    actor._launch()
    built = actor.view_for

    def counted(viewer: Viewer) -> dict[str, Any]:
        tally["views"] += 1
        return built(viewer)

    actor.view_for = counted  # type: ignore[method-assign]
    seats: dict[int, Connection] = {}
    connections: list[Connection] = []
    writers: list[asyncio.Task[None]] = []
    if sockets:
        metrics = Metrics()
        viewers = [Viewer.player(s) for s in range(1, players + 1)]
        viewers += [Viewer.spectator()] * spectators
        for viewer in viewers:
            c = Connection(_Socket(sent), hub=None, metrics=metrics)  # type: ignore[arg-type]
            c.viewer, c.seat, c._batch = viewer, viewer.seat, True
            c.world, c.actor = get_world(options.world), actor
            c._last_view = encode({"type": "view", "view": actor.view_for(viewer)})
            actor.subscribe(c)
            writers.append(asyncio.create_task(c._write()))
            connections.append(c)
            if viewer.seat is not None:
                seats[viewer.seat] = c
    script = []  # what each command's client sends, made before the timed part
    for index, command in enumerate(commands):
        seat = ruleset.actor_of(command)
        payload = ruleset.encode_command(command)
        raw = json.dumps({"type": "command", "id": index, "command": payload})
        script.append((seats.get(seat) if seat is not None else None, raw, command))
    tally["views"] = 0
    started = time.process_time()
    for socket, raw, command in script:
        if socket is not None:
            await socket._handle(raw)
        else:
            await actor.submit(command)
        tally["commands"] += 1
        await _drained(connections)
    cpu = time.process_time() - started
    for task in writers:
        task.cancel()
    await actor.stop()
    for text in sent:
        tally["frames"] += 1
        tally["bytes"] += len(text.encode())
        batch = text.startswith('{"type":"batch"')
        tally["messages"] += len(json.loads(text)["messages"]) if batch else 1
    return {**tally, "cpu_s": cpu}


async def run(args: argparse.Namespace) -> dict[str, Any]:
    totals: dict[str, dict[str, float]] = {}
    for sockets in (True, False):
        total: dict[str, float] = {}
        for seed in range(args.games):
            for key, value in (await play(seed, args.players, args.spectators, sockets)).items():
                total[key] = total.get(key, 0) + value
        totals["sockets" if sockets else "none"] = total
    with_sockets, alone = totals["sockets"], totals["none"]
    n = with_sockets["commands"]
    per = {
        "commands": int(n),
        "cpu_us_per_command": 1e6 * with_sockets["cpu_s"] / n,
        "cpu_us_per_command_no_sockets": 1e6 * alone["cpu_s"] / n,
        "fanout_us_per_command": 1e6 * (with_sockets["cpu_s"] - alone["cpu_s"]) / n,
        "frames_per_command": with_sockets["frames"] / n,
        "messages_per_command": with_sockets["messages"] / n,
        "bytes_per_command": with_sockets["bytes"] / n,
        "views_built_per_command": with_sockets["views"] / n,
    }
    per["fanout_us_per_frame"] = per["fanout_us_per_command"] / per["frames_per_command"]
    return per


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--players", type=int, default=10)
    parser.add_argument("--spectators", type=int, default=2)
    parser.add_argument(
        "--heap",
        type=int,
        default=0,
        help="long-lived container objects made first, as a server's sockets and states",
    )
    parser.add_argument("--tune-gc", action="store_true", help="the server's collector settings")
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    heap = [[i] for i in range(args.heap)]  # tracked by the collector, alive to the end
    if args.tune_gc:
        tune_gc()
    result = asyncio.run(run(args))
    del heap
    for key, value in result.items():
        print(f"{key:32s} {value:10.2f}" if isinstance(value, float) else f"{key:32s} {value}")
    if args.json_out is not None:
        alone = {"cpu_us_per_command": result.pop("cpu_us_per_command_no_sockets")}
        append_json_line(
            args.json_out,
            "fanout",
            figures=result,
            baseline=alone,
            parameters={
                "heap": args.heap,
                "tune_gc": args.tune_gc,
                "games": args.games,
                "players": args.players,
                "spectators": args.spectators,
            },
        )


if __name__ == "__main__":
    main()
