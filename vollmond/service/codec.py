"""Commands and founding options to and from JSON: for the command log and the protocol.

Every command is a small frozen dataclass; its JSON is `{"type": <ClassName>, ...fields}`.
Decoding is strict: unknown types, missing or extra fields and wrong types raise
`CommandDecodeError`, never anything else, so bad input cannot reach the engine.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from vollmond.engine.core import Json
from vollmond.engine.standard import commands as cmds
from vollmond.engine.standard.options import CallSettings, Durations, GameOptions
from vollmond.engine.standard.types import ActionKind, DayCallModes, DeckId, RoleId

COMMAND_TYPES: Mapping[str, type] = {
    cls.__name__: cls
    for cls in (
        cmds.UseAbility,
        cmds.Nominate,
        cmds.Vote,
        cmds.Interject,
        cmds.PlaceCall,
        cmds.AnswerCall,
        cmds.HangUp,
        cmds.ToggleCallMode,
        cmds.Say,
        cmds.Leave,
        cmds.PhaseTimeout,
        cmds.CallTimeout,
        cmds.FloorTimeout,
    )
}
PLAYER_COMMAND_TYPES = frozenset(
    name for name in COMMAND_TYPES if name not in ("PhaseTimeout", "CallTimeout", "FloorTimeout")
)
MAX_INT = 10_000


class CommandDecodeError(ValueError):
    """The JSON is not a well-formed command."""


def encode_command(command: cmds.Command) -> dict[str, Json]:
    out: dict[str, Json] = {"type": type(command).__name__}
    for field in dataclasses.fields(command):
        value = getattr(command, field.name)
        out[field.name] = value.value if isinstance(value, ActionKind) else value
    return out


def _field_value(name: str, annotation: str, raw: Any) -> Any:
    if annotation == "int":
        if type(raw) is not int or not -MAX_INT <= raw <= MAX_INT:
            raise CommandDecodeError(f"{name} must be an integer")
        return raw
    if annotation == "int | None":
        return None if raw is None else _field_value(name, "int", raw)
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
    if annotation == "ActionKind":
        try:
            return ActionKind(raw)
        except ValueError as exc:
            raise CommandDecodeError(f"unknown ability {raw!r}") from exc
    raise CommandDecodeError(f"unsupported field {name}")  # pragma: no cover - schema guard


def decode_command(data: object, *, allowed: frozenset[str] | None = None) -> cmds.Command:
    if not isinstance(data, dict):
        raise CommandDecodeError("a command is a JSON object")
    kind = data.get("type")
    if not isinstance(kind, str) or kind not in COMMAND_TYPES:
        raise CommandDecodeError(f"unknown command type {kind!r}")
    if allowed is not None and kind not in allowed:
        raise CommandDecodeError(f"command type {kind!r} is not allowed here")
    cls = COMMAND_TYPES[kind]
    fields = {f.name: str(f.type) for f in dataclasses.fields(cls)}
    extra = set(data) - set(fields) - {"type"}
    if extra:
        raise CommandDecodeError(f"unexpected fields {sorted(extra)}")
    values = {}
    for name, annotation in fields.items():
        if name not in data:
            raise CommandDecodeError(f"missing field {name!r}")
        values[name] = _field_value(name, annotation, data[name])
    command: cmds.Command = cls(**values)
    return command


def options_from_json(data: Mapping[str, Any]) -> GameOptions:
    """The inverse of `GameOptions.to_json`; raises ValueError/KeyError/TypeError on junk."""
    calls = data.get("calls", {})
    durations = data.get("durations", {})
    lovers = data.get("lovers")
    return GameOptions(
        players=int(data["players"]),
        world=str(data.get("world", "werwolf")),
        deck=DeckId(data.get("deck", DeckId.AUTO.value)),
        custom_roles=tuple((RoleId(r), int(n)) for r, n in data.get("custom_roles", ())),
        lovers=None if lovers is None else bool(lovers),
        unanimous=bool(data.get("unanimous", False)),
        instant_kill=bool(data.get("instant_kill", False)),
        calls=CallSettings(
            enabled=bool(calls.get("enabled", True)),
            max_duration_s=float(calls.get("max_duration_s", 120.0)),
            per_night=int(calls.get("per_night", 3)),
            by_day=bool(calls.get("by_day", False)),
            day_modes=DayCallModes(calls.get("day_modes", DayCallModes.BOTH.value)),
            evil_may_call=bool(calls.get("evil_may_call", True)),
            ring_s=float(calls.get("ring_s", 20.0)),
        ),
        durations=Durations(**{k: float(v) for k, v in durations.items()}),
        stalemate_rounds=int(data.get("stalemate_rounds", 3)),
    )
