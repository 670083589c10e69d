"""The operator's settings file: one TOML file, one table per settings group.

```toml
[policy]
private_default_max = 9
[sip]
trusted_proxies = ["10.0.0.2"]
```

Unknown tables and keys are errors, not silently ignored: a misspelt limit must not leave the
service running with the default.
"""

from __future__ import annotations

import dataclasses
import tomllib
import types
import typing
from pathlib import Path
from typing import Any, TypeVar

import msgspec

T = TypeVar("T")


class ConfigError(ValueError):
    """The settings file cannot be used; the message names the table and key."""


def load_config(path: Path) -> dict[str, Any]:
    """The tables of the settings file at `path`."""
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from exc


def read_group(table: object, kind: type[T], where: str) -> T:
    """One settings group from its table: unknown keys rejected, missing keys default."""
    if not isinstance(table, dict):
        raise ConfigError(f"[{where}] must be a table")
    _check_keys(table, kind, where)
    try:
        return msgspec.convert(table, kind, strict=False)
    except msgspec.ValidationError as exc:
        raise ConfigError(f"[{where}] {exc}") from exc


def _check_keys(table: dict[str, Any], kind: type[Any], where: str) -> None:
    fields = {f.name: f for f in dataclasses.fields(kind)}
    hints = typing.get_type_hints(kind)
    for key, value in table.items():
        if key not in fields:
            raise ConfigError(f"[{where}] unknown key {key!r}; known: {', '.join(sorted(fields))}")
        hint = hints[key]
        if isinstance(hint, types.UnionType):
            continue
        if dataclasses.is_dataclass(hint) and isinstance(value, dict):
            _check_keys(value, typing.cast(type[Any], hint), f"{where}.{key}")
