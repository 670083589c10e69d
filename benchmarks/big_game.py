"""A big public game (P1: no size limit) against a table of 12, in the same run.

    .venv/bin/python -m benchmarks.big_game [--players 60,120,200] [--samples 40]
        [--speakers 8] [--json-out F]

For each size, one complete game played by random bots (seed 0), then its command log
replayed: the engine's `apply` per command, and on a sample of its states the whole fan-out a
command causes on the web server: the view of every seat and a spectator, JSON-encoded, as
each socket gets it. A table of 12 is the baseline: the figures are given as ratios to it, so
what grows with the table (and how fast) is seen without trusting the machine's absolute speed.
The fan-out per command is the figure that bounds a big game: a command that takes it longer
than the time between two commands queues the next ones.

The voice and the phone of the same game, on one day state of it (the market place, where
everyone alive hears everyone):

* routing: the routing table of a state and the mixer's gain matrix from it (`set_routing`),
  once per command that changes the state;
* the mixer's 20 ms tick with `--speakers` houses speaking at once (each pushes a frame) and
  every house and the spectators pulling their mix, as the media clock does;
* the phone narration of one public event: for every seat's caller, its sentence and its
  audio until every queue holds the audio, as the game lines do: the queues share the node's
  `Renders` as the service's sessions do (the sentence made once, `event_words`; its audio
  rendered in one worker-thread job, the other callers joining it). `per caller` is the way
  before the sharing, side by side in the same run: `render_event` per caller and a `Renders`
  per queue (one worker-thread job per caller). Every distinct render is awaited once (the
  service awaits none: a line's frames find the audio ready). The voice is espeak's cache
  with synthesis replaced by silence (counted): what is measured is the per-caller work, and
  `synth` says how often the same sentence was synthesized for the table instead of once.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from pathlib import Path

import msgspec
import numpy as np

from benchmarks.engine import percentile
from benchmarks.jsonline import append_json_line
from vollmond.engine.core import Event, Rejection, Viewer
from vollmond.engine.ruleset import SPECTATORS
from vollmond.engine.standard import GameOptions, apply, new_game
from vollmond.engine.standard.replay import rng_for
from vollmond.engine.standard.routing import routing
from vollmond.engine.standard.sim import play_game
from vollmond.engine.standard.state import GameState
from vollmond.engine.standard.types import Phase
from vollmond.engine.standard.view import view
from vollmond.i18n import render_event
from vollmond.phone.session.line import event_words
from vollmond.phone.session.prompts import Priority, Renders
from vollmond.phone.session.prompts.queue import PromptQueue
from vollmond.phone.session.prompts.voice import Audio, EspeakVoice
from vollmond.voice.frames import FRAME_SAMPLES
from vollmond.voice.mixer import GameMixer
from vollmond.worlds import get_world
from vollmond.worlds.loader import STANDARD_RULESET

BASELINE_PLAYERS = 12


TICKS = 250


class _SilentVoice(EspeakVoice):
    """espeak's cache (memory) with synthesis replaced by half a second of silence, counted."""

    def _synthesize(self, text: str, lang: str) -> Audio:
        self.renders += 1
        return np.zeros(4000, dtype=np.int16)


def measure_voice(state: GameState, speakers: int) -> dict[str, float]:
    """Routing per command and the mixer's tick on one day state (see the module's text)."""
    seats = len(state.players)
    mixer = GameMixer(seats)
    started = time.process_time()
    for _ in range(5):
        mixer.set_routing(routing(state))
    routing_ms = (time.process_time() - started) * 1000 / 5
    living = [p.seat for p in state.players if p.alive]
    talking = living[: min(speakers, len(living))]
    rng = np.random.default_rng(0)
    frames = [rng.integers(-3000, 3000, FRAME_SAMPLES).astype(np.int16) for _ in talking]
    listeners = [*range(1, seats + 1), SPECTATORS]
    tick_us: list[float] = []
    audible = 0
    for _ in range(TICKS):
        t0 = time.process_time_ns()
        for seat, frame in zip(talking, frames, strict=True):
            mixer.push(seat, frame)
        for listener in listeners:
            audible += mixer.pull(listener) is not None
        tick_us.append((time.process_time_ns() - t0) / 1000)
    assert audible > 0, "nobody heard the market place"
    return {
        "routing_ms": routing_ms,
        "speakers": len(talking),
        "mixer_tick_median_us": statistics.median(tick_us),
        "mixer_tick_p99_us": percentile(tick_us, 0.99),
    }


def measure_narration(state: GameState, event: Event) -> dict[str, float]:
    """One public event narrated to a caller on every seat (see the module's text)."""
    seats = len(state.players)
    world = get_world(state.options.world)
    voice = _SilentVoice()

    async def narrate(*, shared: bool) -> float:
        renders = Renders(voice)  # new words: nothing of this sentence kept yet
        queues = [
            PromptQueue(voice, "de", renders=renders if shared else None) for _ in range(seats)
        ]
        started = time.process_time()
        for queue in queues:
            if shared:
                queue.say(event_words(renders, event, "de", world, STANDARD_RULESET), Priority.NEWS)
            else:
                queue.say(render_event(event, "de", world), Priority.NEWS)
        # Every distinct render awaited once: a line only queues, its frames then find the
        # audio ready (one task per queue awaiting it would be the benchmark's cost, not the
        # service's).
        renders_running = {u.pending for q in queues for u in q.queued if u.pending is not None}
        await asyncio.gather(*renders_running)
        spent = (time.process_time() - started) * 1000
        assert all(queue.playing is not None and queue.playing.ready() for queue in queues)
        return spent

    cold = asyncio.run(narrate(shared=True))
    synthesized = voice.renders
    warm = statistics.median(asyncio.run(narrate(shared=True)) for _ in range(5))
    per_caller = statistics.median(asyncio.run(narrate(shared=False)) for _ in range(5))
    return {
        "narration_cold_ms": cold,
        "narration_ms": warm,
        "narration_per_caller_ms": per_caller,
        "narration_synth": synthesized,
    }


def first_day(states: list[GameState]) -> GameState:
    """The first state of a day (the market place): the state with most listeners."""
    return next(s for s in states if s.phase is Phase.DAY)


def measure(players: int, samples: int, seed: int = 0, speakers: int = 8) -> dict[str, float]:
    options = GameOptions(players=players)
    started = time.process_time()
    game = play_game(options, seed)
    bot_cpu = time.process_time() - started
    state = new_game(options, rng_for(seed, 0)).state
    states = []
    apply_ns: list[float] = []
    public: Event | None = None
    for index, command in enumerate(game.commands, start=1):
        t0 = time.perf_counter_ns()
        outcome = apply(state, command, rng_for(seed, index))
        apply_ns.append(time.perf_counter_ns() - t0)
        assert not isinstance(outcome, Rejection)
        state = outcome.state
        states.append(state)
        if public is None:
            public = next((e for e in outcome.events if e.code == "nominated"), None)
    assert public is not None, "no nomination in the game"
    step = max(1, len(states) // samples)
    viewers = [Viewer.player(seat) for seat in range(1, players + 1)] + [Viewer.spectator()]
    fan_out_ms: list[float] = []
    for sampled in states[::step]:
        fan_out_started = time.process_time()
        for viewer in viewers:
            msgspec.json.encode({"type": "view", "view": view(sampled, viewer)})
        fan_out_ms.append((time.process_time() - fan_out_started) * 1000)
    commands = len(game.commands)
    day = first_day(states)
    return {
        **measure_voice(day, speakers),
        **measure_narration(day, public),
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
    parser.add_argument("--speakers", type=int, default=8, help="houses speaking at once")
    parser.add_argument("--json-out", type=Path, help="append one JSON line with the figures")
    args = parser.parse_args()
    sizes = [int(size) for size in args.players.split(",")]
    baseline = measure(BASELINE_PLAYERS, args.samples, speakers=args.speakers)
    rows = [measure(size, args.samples, speakers=args.speakers) for size in sizes]
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
    print(
        f"\n{'players':>7} {'routing ms':>10} {'speakers':>8} {'tick µs':>8} {'p99':>7} "
        f"{'narration ms':>12} {'cold':>7} {'per caller':>10} {'synth':>5}  "
        f"× table of {BASELINE_PLAYERS}"
    )
    for row in [baseline, *rows]:
        print(
            f"{row['players']:7.0f} {row['routing_ms']:10.2f} {row['speakers']:8.0f} "
            f"{row['mixer_tick_median_us']:8.0f} {row['mixer_tick_p99_us']:7.0f} "
            f"{row['narration_ms']:12.2f} {row['narration_cold_ms']:7.1f} "
            f"{row['narration_per_caller_ms']:10.2f} {row['narration_synth']:5.0f}  "
            f"routing ×{row['routing_ms'] / baseline['routing_ms']:.1f}, "
            f"tick ×{row['mixer_tick_median_us'] / baseline['mixer_tick_median_us']:.1f}, "
            f"narration ×{row['narration_ms'] / baseline['narration_ms']:.1f} "
            f"(per caller ×{row['narration_per_caller_ms'] / baseline['narration_ms']:.1f}; "
            f"shared {row['narration_ms'] / row['narration_per_caller_ms']:.2f} of per caller)"
        )
    if args.json_out is not None:
        append_json_line(
            args.json_out,
            "big_game",
            figures={str(row["players"]): row for row in rows},
            baseline=baseline,
            parameters={"players": sizes, "samples": args.samples, "speakers": args.speakers},
        )


if __name__ == "__main__":
    main()
