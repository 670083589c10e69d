"""Column types and value aliases shared by the store's tables.

Kept apart from the models so that migrations can import the same types without importing the
ORM classes (a migration must keep describing the schema of its own revision).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, TypeAlias

from sqlalchemy import JSON, BigInteger, DateTime, Dialect, Integer
from sqlalchemy.types import TypeDecorator

JSONValue: TypeAlias = dict[str, Any] | list[Any] | str | int | float | bool | None
"""Anything `json.dumps` accepts; the store never interprets payloads, it only keeps them."""

JSONObject: TypeAlias = dict[str, Any]

# SQLite only auto-increments a column declared exactly INTEGER PRIMARY KEY, while PostgreSQL
# ledgers and logs may outgrow 32 bits; so the id type differs per dialect.
BigId = BigInteger().with_variant(Integer(), "sqlite")

JSONColumn = JSON(none_as_null=False)


def utcnow() -> datetime:
    """The store's single notion of "now"; callers that need determinism pass `now` explicitly."""
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp that is always timezone-aware UTC in Python.

    SQLite keeps no timezone and PostgreSQL answers in the session's zone; without this, the
    same row would compare differently depending on the backend.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to the store; use an aware UTC datetime")
        value = value.astimezone(UTC)
        if dialect.name == "sqlite":
            return value.replace(tzinfo=None)
        return value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)
