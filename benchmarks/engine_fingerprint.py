"""A fingerprint of what the standard engine does with recorded command logs.

    .venv/bin/python -m benchmarks.engine_fingerprint --record logs.pickle   # play, keep the logs
    .venv/bin/python -m benchmarks.engine_fingerprint --logs logs.pickle     # replay them

`--record` plays bot games (5, 8, 12 and 20 seats, every third game with smart bots in half
the seats, and the golden transcripts' three games) and stores their command logs; `--logs`
replays stored logs instead of playing.
Either way every result of `apply` (state, events, timers) and every final state is reduced
to a canonical form and hashed; the SHA-256 is printed. Record the logs with one tree's bots
and replay them through another tree's engine: equal hashes mean the engine did exactly the
same with the same commands, whatever the bots now choose. The logs are pickled command
values: read them only with the same code base that wrote them (never from elsewhere).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import pickle
from enum import Enum
from pathlib import Path
from typing import Any

from vollmond.engine.core import Rejection
from vollmond.engine.standard import DeckId, GameOptions, apply, new_game
from vollmond.engine.standard.commands import Command
from vollmond.engine.standard.replay import rng_for
from vollmond.engine.standard.sim import play_game

Log = tuple[GameOptions, int, list[Command]]  # options, seed, commands

GOLDEN = (  # the golden transcripts' games (tests/engine/test_golden.py): other decks, worlds
    (GameOptions(players=8, world="werwolf"), 1),
    (GameOptions(players=7, world="vampir", deck=DeckId.STARTER), 2),
    (GameOptions(players=13, world="mafia", deck=DeckId.TRIBUNAL, instant_kill=True), 3),
)


def canonical(value: Any) -> Any:
    """A value as nested tuples that print the same in every process: dataclasses by field,
    dicts and sets sorted, enums by value, a role's spec (a constant) by its id."""
    if isinstance(value, Enum):
        return value.value
    if type(value).__name__ == "RoleSpec":
        return ("RoleSpec", value.id.value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (
            type(value).__name__,
            tuple((f.name, canonical(getattr(value, f.name))) for f in dataclasses.fields(value)),
        )
    if isinstance(value, dict):
        return ("dict", tuple(sorted((repr(canonical(k)), canonical(v)) for k, v in value.items())))
    if isinstance(value, frozenset | set):
        return ("set", tuple(sorted(repr(canonical(v)) for v in value)))
    if isinstance(value, tuple | list):
        return tuple(canonical(v) for v in value)
    return value


def play_logs(games: int) -> list[Log]:
    logs: list[Log] = [
        (options, seed, play_game(options, seed).commands) for options, seed in GOLDEN
    ]
    for players in (5, 8, 12, 20):
        options = GameOptions(players=players)
        for seed in range(games):
            smart = frozenset(range(1, players + 1, 2)) if seed % 3 == 0 else frozenset()
            logs.append((options, seed, play_game(options, seed, smart_seats=smart).commands))
    return logs


def fingerprint(logs: list[Log]) -> tuple[str, int]:
    digest = hashlib.sha256()
    commands = 0
    for options, seed, log in logs:
        result = new_game(options, rng_for(seed, 0))
        digest.update(repr(canonical(result)).encode())
        state = result.state
        for index, command in enumerate(log, start=1):
            outcome = apply(state, command, rng_for(seed, index))
            digest.update(repr(canonical(outcome)).encode())
            if not isinstance(outcome, Rejection):
                state = outcome.state
            commands += 1
        digest.update(repr(canonical(state)).encode())
    return digest.hexdigest(), commands


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=60, help="games per table size")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--record", type=Path, help="play, store the logs here, hash them")
    source.add_argument("--logs", type=Path, help="replay logs stored by --record, hash them")
    args = parser.parse_args()
    if args.record is not None:
        logs = play_logs(args.games)
        args.record.write_bytes(pickle.dumps(logs))
    else:
        logs = pickle.loads(args.logs.read_bytes())  # our own file (see above)
    digest, commands = fingerprint(logs)
    print(f"{len(logs)} games, {commands} commands: sha256 {digest}")


if __name__ == "__main__":
    main()
