"""A big public game (P1: no size limit) against a table of 12, in the same run.

    .venv/bin/python -m benchmarks.big_game [--players 60,120,200] [--samples 40] [--json-out F]

For each size, one complete game played by random bots (seed 0), then its command log
replayed: the engine's `apply` per command, and on a sample of its states the whole fan-out a
command causes on the web server: the view of every seat and a spectator, JSON-encoded, as
each socket gets it. A table of 12 is the baseline: the figures are given as ratios to it, so
what grows with the table (and how fast) is seen without trusting the machine's absolute speed.
The fan-out per command is the figure that bounds a big game: a command that takes it longer
than the time between two commands queues the next ones.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import msgspec

from benchmarks.engine import percentile
from benchmarks.jsonline import append_json_line
from vollmond.engine.core import Rejection, Viewer
from vollmond.engine.standard import GameOptions, apply, new_game
from vollmond.engine.standard.replay import rng_for
from vollmond.engine.standard.sim import play_game
from vollmond.engine.standard.view import view

BASELINE_PLAYERS = 12


def measure(players: int, samples: int, seed: int = 0) -> dict[str, float]:
    options = GameOptions(players=players)
    started = time.process_time()
    game = play_game(options, seed)
    bot_cpu = time.process_time() - started
    state = new_game(options, rng_for(seed, 0)).state
    states = []
    apply_ns: list[float] = []
    for index, command in enumerate(game.commands, start=1):
        t0 = time.perf_counter_ns()
        outcome = apply(state, command, rng_for(seed, index))
        apply_ns.append(time.perf_counter_ns() - t0)
        assert not isinstance(outcome, Rejection)
        state = outcome.state
        states.append(state)
    step = max(1, len(states) // samples)
    viewers = [Viewer.player(seat) for seat in range(1, players + 1)] + [Viewer.spectator()]
    fan_out_ms: list[float] = []
    for sampled in states[::step]:
        fan_out_started = time.process_time()
        for viewer in viewers:
            msgspec.json.encode({"type": "view", "view": view(sampled, viewer)})
        fan_out_ms.append((time.process_time() - fan_out_started) * 1000)
    commands = len(game.commands)
    return {
        "players": players,
        "commands": commands,
        "bot_game_cpu_s": bot_cpu,
        "apply_median_us": statistics.median(apply_ns) / 1000,
        "apply_p99_us": percentile(apply_ns, 0.99) / 1000,
        "fan_out_median_ms": statistics.median(fan_out_ms),
        "fan_out_p99_ms": percentile(fan_out_ms, 0.99),
        "view_per_viewer_us": statistics.median(fan_out_ms) * 1000 / len(viewers),
        "commands_per_s_by_fan_out": 1000 / statistics.median(fan_out_ms),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", default="60,120,200")
    parser.add_argument("--samples", type=int, default=40, help="states whose fan-out is timed")
    parser.add_argument("--json-out", type=Path, help="append one JSON line with the figures")
    args = parser.parse_args()
    sizes = [int(size) for size in args.players.split(",")]
    baseline = measure(BASELINE_PLAYERS, args.samples)
    rows = [measure(size, args.samples) for size in sizes]
    print(
        f"{'players':>7} {'commands':>8} {'apply µs':>9} {'p99':>7} {'fan-out ms':>10} "
        f"{'p99':>7} {'µs/viewer':>9} {'cmd/s':>7}  × table of {BASELINE_PLAYERS}"
    )
    for row in [baseline, *rows]:
        ratio = row["fan_out_median_ms"] / baseline["fan_out_median_ms"]
        print(
            f"{row['players']:7.0f} {row['commands']:8.0f} {row['apply_median_us']:9.1f} "
            f"{row['apply_p99_us']:7.0f} {row['fan_out_median_ms']:10.2f} "
            f"{row['fan_out_p99_ms']:7.2f} {row['view_per_viewer_us']:9.1f} "
            f"{row['commands_per_s_by_fan_out']:7.0f}  fan-out ×{ratio:.1f}, "
            f"apply ×{row['apply_median_us'] / baseline['apply_median_us']:.1f}"
        )
    if args.json_out is not None:
        append_json_line(
            args.json_out,
            "big_game",
            figures={str(row["players"]): row for row in rows},
            baseline=baseline,
            parameters={"players": sizes, "samples": args.samples},
        )


if __name__ == "__main__":
    main()
