"""The transport between processes: NATS against the local bus (the baseline), same run.

    .venv/bin/python -m benchmarks.transport [--nats-url nats://127.0.0.1:4222]
        [--requests 2000] [--messages 20000] [--size 300] [--json-out FILE]

Two figures the sharded service depends on, each on both transports (the local bus's broker in
a process of its own, as the supervisor runs it; the NATS server as it runs):
- an owner call: `--requests` requests one after the other to a subscriber that answers at
  once — the round trip's p50/p99 (a mirror's command pays it once);
- a game's log stream: `--messages` entries of `--size` bytes published back to back, until
  the subscriber has them all — messages per second (the owner's publishing of every entry).
Both clients are on one uvloop event loop in this process, as a worker's are. The machine's
load shows in the figures: compare the ratios, not the absolute numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import uvloop

from benchmarks.jsonline import append_json_line
from vollmond.service.shards.localbus import Broker, LocalTransport
from vollmond.service.shards.natsbus import NatsTransport
from vollmond.service.shards.transport import Message, Transport

Connect = Callable[[], Awaitable[Transport]]


T = TypeVar("T")


def on_uvloop(main: Coroutine[Any, Any, T]) -> T:
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(main)


def run_broker(path: str, ready: Any) -> None:
    async def serve() -> None:
        broker = Broker(path)
        await broker.start()
        ready.set()
        await asyncio.Event().wait()  # until the benchmark terminates this process

    on_uvloop(serve())


async def _measure(connect: Connect, requests: int, messages: int, size: int) -> dict[str, float]:
    asker, owner = await connect(), await connect()
    try:
        await owner.subscribe("node.w0.calls", lambda m: owner.reply(m, m.data))
        payload = b"x" * size
        rtts: list[float] = []
        for _ in range(requests):
            started = time.perf_counter()
            await asker.request("node.w0.calls", payload, 10.0)
            rtts.append(time.perf_counter() - started)

        got = 0
        all_there = asyncio.get_running_loop().create_future()

        def count(_: Message) -> None:
            nonlocal got
            got += 1
            if got == messages and not all_there.done():
                all_there.set_result(None)

        await owner.subscribe("game.g.log", count)
        started = time.perf_counter()
        for _ in range(messages):
            asker.publish("game.g.log", payload)
        await asyncio.wait_for(all_there, 120.0)
        elapsed = time.perf_counter() - started
    finally:
        await asker.close()
        await owner.close()
    quantiles = statistics.quantiles(rtts, n=100)
    return {
        "call_p50_ms": quantiles[49] * 1000,
        "call_p99_ms": quantiles[98] * 1000,
        "stream_msgs_per_s": messages / elapsed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nats-url", default="nats://127.0.0.1:4222")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--messages", type=int, default=20000)
    parser.add_argument("--size", type=int, default=300)
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="vollmond-bench-bus-") as folder:
        path = str(Path(folder) / "bus.sock")
        context = multiprocessing.get_context("spawn")
        ready = context.Event()
        broker = context.Process(target=run_broker, args=(path, ready), daemon=True)
        broker.start()
        try:
            if not ready.wait(30):
                raise SystemExit("the local broker did not start")
            baseline = on_uvloop(
                _measure(
                    lambda: LocalTransport.connect(path), args.requests, args.messages, args.size
                )
            )
        finally:
            broker.terminate()
            broker.join()
    namespace = f"bench{uuid.uuid4().hex}"
    figures = on_uvloop(
        _measure(
            lambda: NatsTransport.connect(args.nats_url, namespace=namespace),
            args.requests,
            args.messages,
            args.size,
        )
    )
    print(f"{'':24}{'local bus':>12}{'NATS':>12}{'NATS/local':>12}")
    for key in figures:
        ratio = figures[key] / baseline[key]
        print(f"{key:24}{baseline[key]:12.3f}{figures[key]:12.3f}{ratio:12.2f}")
    if args.json_out is not None:
        append_json_line(
            args.json_out,
            "transport",
            figures=figures,
            baseline=baseline,
            parameters={
                "requests": args.requests,
                "messages": args.messages,
                "size": args.size,
                "baseline": "local bus (broker in its own process)",
            },
        )


if __name__ == "__main__":
    main()
