"""Engine throughput: complete 12-player games per second and per-command `apply` time.

    .venv/bin/python -m benchmarks.engine [--games 300] [--players 12] [--repeat 1]
                                          [--json-out FILE]

Three figures, side by side:
- bot games/s: complete games where random bots choose every command (bot cost included);
- replayed games/s: the same games' command logs applied by the engine alone (deal and
  `apply` only, in a loop of their own: nothing else is timed in);
- per-command apply time (median, p99), against a baseline that does the least any immutable
  update must do: one `dataclasses.replace` of the game state per command (a separate pass,
  each command timed on its own).

- fan-out: the JSON view of every seat and a spectator for each state of the first
  `--view-games` games (a table of `--view-players`, 10 by default, as the issue measured),
  per viewer: `view()` as the web server builds it for each socket, encoding included.

With `--repeat N` the bot games and the replays are each timed N times and the best run is
kept (the least disturbed by other work on the machine). Games per second are given twice:
by the wall clock and by this process's CPU time (per core). On a machine shared with other
work the CPU figure is the steadier one; compare two trees in the same time window (e.g.
alternating runs) and report ratios.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import msgspec

from benchmarks.jsonline import append_json_line
from vollmond.engine.core import Rejection, Viewer
from vollmond.engine.standard import GameOptions, apply, new_game
from vollmond.engine.standard.replay import rng_for
from vollmond.engine.standard.sim import PlayedGame, play_game
from vollmond.engine.standard.view import view


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def view_figures(games: int, players: int) -> dict[str, float]:
    """CPU µs per viewer of a fan-out: every seat and a spectator see each state of the games."""
    options = GameOptions(players=players)
    states = []
    for seed in range(games):
        state = new_game(options, rng_for(seed, 0)).state
        for index, command in enumerate(play_game(options, seed).commands, start=1):
            outcome = apply(state, command, rng_for(seed, index))
            assert not isinstance(outcome, Rejection)
            state = outcome.state
            states.append(state)
    viewers = [Viewer.player(seat) for seat in range(1, players + 1)] + [Viewer.spectator()]
    started = time.process_time()
    for state in states:
        for viewer in viewers:
            msgspec.json.encode({"type": "view", "view": view(state, viewer)})
    seconds = time.process_time() - started
    return {"view_per_viewer_us": seconds / (len(states) * len(viewers)) * 1e6}


def replay_game(options: GameOptions, game: PlayedGame) -> None:
    """The engine alone: deal, then apply every command of the log, nothing else timed in."""
    seed = game.seed
    state = new_game(options, rng_for(seed, 0)).state
    for index, command in enumerate(game.commands, start=1):
        outcome = apply(state, command, rng_for(seed, index))
        assert not isinstance(outcome, Rejection)
        state = outcome.state


def _timed(run: Callable[[], object], repeat: int) -> tuple[float, float]:
    """The best of `repeat` runs: wall seconds and CPU seconds (each the least seen)."""
    best_wall = best_cpu = float("inf")
    for _ in range(repeat):
        started, cpu_started = time.perf_counter(), time.process_time()
        run()
        best_wall = min(best_wall, time.perf_counter() - started)
        best_cpu = min(best_cpu, time.process_time() - cpu_started)
    return best_wall, best_cpu


def measure(
    games: int, players: int, view_games: int = 20, view_players: int = 10, repeat: int = 1
) -> dict[str, float]:
    options = GameOptions(players=players)
    played: list[PlayedGame] = []

    def play() -> None:
        played[:] = [play_game(options, seed) for seed in range(games)]

    def replay() -> None:
        for game in played:
            replay_game(options, game)

    bot_seconds, bot_cpu = _timed(play, repeat)
    replay_seconds, replay_cpu = _timed(replay, repeat)

    apply_ns: list[float] = []
    floor_ns: list[float] = []
    for game in played:
        state = new_game(options, rng_for(game.seed, 0)).state
        for index, command in enumerate(game.commands, start=1):
            t0 = time.perf_counter_ns()
            outcome = apply(state, command, rng_for(game.seed, index))
            t1 = time.perf_counter_ns()
            assert not isinstance(outcome, Rejection)
            replace(state, phase_seq=state.phase_seq)
            t2 = time.perf_counter_ns()
            apply_ns.append(t1 - t0)
            floor_ns.append(t2 - t1)
            state = outcome.state
    commands = len(apply_ns)
    return view_figures(view_games, view_players) | {
        "games": games,
        "players": players,
        "commands_per_game": commands / games,
        "bot_games_per_second": games / bot_seconds,
        "replayed_games_per_second": games / replay_seconds,
        "bot_games_per_cpu_second": games / bot_cpu,
        "replayed_games_per_cpu_second": games / replay_cpu,
        "bots_cpu_ms_per_game": max(0.0, bot_cpu - replay_cpu) / games * 1000,
        "apply_median_us": statistics.median(apply_ns) / 1000,
        "apply_p99_us": percentile(apply_ns, 0.99) / 1000,
        "baseline_replace_median_us": statistics.median(floor_ns) / 1000,
        "apply_over_baseline": statistics.median(apply_ns) / max(1.0, statistics.median(floor_ns)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--players", type=int, default=12)
    parser.add_argument("--view-games", type=int, default=20)
    parser.add_argument("--view-players", type=int, default=10)
    parser.add_argument(
        "--repeat", type=int, default=1, help="time bot games and replays N times, keep the best"
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--json-out", type=Path, help="append one JSON line with the figures")
    args = parser.parse_args()
    figures = measure(args.games, args.players, args.view_games, args.view_players, args.repeat)
    if args.json_out is not None:
        baseline = {"replace_median_us": figures["baseline_replace_median_us"]}
        own = {k: v for k, v in figures.items() if not k.startswith("baseline_")}
        append_json_line(
            args.json_out,
            "engine",
            figures=own,
            baseline=baseline,
            parameters={"games": args.games, "players": args.players, "repeat": args.repeat},
        )
    if args.json:
        print(json.dumps(figures, sort_keys=True))
        return
    print(
        f"{figures['games']:.0f} games of {figures['players']:.0f} players, "
        f"{figures['commands_per_game']:.1f} commands per game"
    )
    print(
        f"  bot-driven complete games   {figures['bot_games_per_second']:8.1f} /s"
        f"  ({figures['bot_games_per_cpu_second']:.1f} per CPU second)"
    )
    print(
        f"  engine-only replayed games  {figures['replayed_games_per_second']:8.1f} /s"
        f"  ({figures['replayed_games_per_cpu_second']:.1f} per CPU second)"
    )
    print(
        f"  of a bot game, the bots'    {figures['bots_cpu_ms_per_game']:8.2f} ms CPU"
        "  (bot games minus the replay of their logs)"
    )
    print(
        f"  apply per command           median {figures['apply_median_us']:.1f} µs, "
        f"p99 {figures['apply_p99_us']:.1f} µs"
    )
    print(f"  view per viewer (fan-out)   {figures['view_per_viewer_us']:.1f} µs CPU, encoded")
    print(
        f"  baseline (one state replace) median {figures['baseline_replace_median_us']:.1f} µs"
        f"  → apply = {figures['apply_over_baseline']:.1f}× baseline"
    )


if __name__ == "__main__":
    main()
