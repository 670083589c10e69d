"""Commands to and from JSON, for any rule set whose commands are small frozen dataclasses.

A command's JSON is `{"type": <ClassName>, ...fields}`. Decoding is strict: unknown types,
missing or extra fields and wrong types raise `CommandDecodeError`, never anything else, so
bad input from a browser or a damaged log cannot reach the rules. Each rule set builds one
`CommandCodec` from its command classes; the runtime reaches it only through the `RuleSet`
protocol, so no channel needs to know a rule set's commands.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from vollmond.engine.core import Json

MAX_INT = 10_000
"""Every integer field (seat, phase number, call id) is far below this; larger is junk."""


class CommandDecodeError(ValueError):
    """The JSON is not a well-formed command of this rule set."""


@dataclass(frozen=True, slots=True)
class CommandCodec:
    """The JSON codec of one rule set's commands.

    `players` are the classes a client may send; `timers` only the runtime sends (a browser
    may not end a phase). `enums` are the enum types fields are annotated with, by name.
    """

    players: tuple[type, ...]
    timers: tuple[type, ...]
    enums: Mapping[str, type[Enum]] = dataclasses.field(default_factory=dict)

    @property
    def types(self) -> dict[str, type]:
        return {cls.__name__: cls for cls in (*self.players, *self.timers)}

    @property
    def player_types(self) -> frozenset[str]:
        return frozenset(cls.__name__ for cls in self.players)

    def encode(self, command: object) -> dict[str, Json]:
        out: dict[str, Json] = {"type": type(command).__name__}
        for field in dataclasses.fields(command):  # type: ignore[arg-type]
            value = getattr(command, field.name)
            out[field.name] = value.value if isinstance(value, Enum) else value
        return out

    def decode(self, data: object, *, players_only: bool = False) -> Any:
        """The command `data` describes; with `players_only`, timer commands are refused."""
        if not isinstance(data, dict):
            raise CommandDecodeError("a command is a JSON object")
        kind = data.get("type")
        types = self.types
        if not isinstance(kind, str) or kind not in types:
            raise CommandDecodeError(f"unknown command type {kind!r}")
        if players_only and kind not in self.player_types:
            raise CommandDecodeError(f"command type {kind!r} is not allowed here")
        cls = types[kind]
        fields = {f.name: str(f.type) for f in dataclasses.fields(cls)}
        extra = set(data) - set(fields) - {"type"}
        if extra:
            raise CommandDecodeError(f"unexpected fields {sorted(extra)}")
        values = {}
        for name, annotation in fields.items():
            if name not in data:
                raise CommandDecodeError(f"missing field {name!r}")
            values[name] = self._value(name, annotation, data[name])
        return cls(**values)

    def _value(self, name: str, annotation: str, raw: Any) -> Any:
        if annotation.endswith(" | None"):
            return None if raw is None else self._value(name, annotation[: -len(" | None")], raw)
        if annotation == "int":
            if type(raw) is not int or not -MAX_INT <= raw <= MAX_INT:
                raise CommandDecodeError(f"{name} must be an integer")
            return raw
        if annotation == "bool":
            if type(raw) is not bool:
                raise CommandDecodeError(f"{name} must be true or false")
            return raw
        if annotation == "str":
            if not isinstance(raw, str):
                raise CommandDecodeError(f"{name} must be text")
            if "\x00" in raw:
                # PostgreSQL cannot keep NUL in text or JSON: refused here, not in the log writer.
                raise CommandDecodeError(f"{name} must not contain NUL characters")
            return raw
        enum = self.enums.get(annotation)
        if enum is not None:
            try:
                return enum(raw)
            except ValueError as exc:
                raise CommandDecodeError(f"unknown {name} {raw!r}") from exc
        raise CommandDecodeError(f"unsupported field {name}")  # pragma: no cover - schema guard


def codec_of(players: Iterable[type], timers: Iterable[type], *enums: type[Enum]) -> CommandCodec:
    """A codec for these command classes; enum field types are named by their class name."""
    return CommandCodec(tuple(players), tuple(timers), {e.__name__: e for e in enums})
