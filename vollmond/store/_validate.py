"""Argument checks shared by the ledgers and grants."""

from __future__ import annotations

from datetime import datetime

REASON_MAX_LENGTH = 200


def check_reason(reason: str) -> str:
    """Every booking must say why; the limit matches the column so errors are ours, not SQL's."""
    cleaned = reason.strip()
    if not cleaned:
        raise ValueError("a reason is required")
    if len(cleaned) > REASON_MAX_LENGTH:
        raise ValueError(f"reason is longer than {REASON_MAX_LENGTH} characters")
    return cleaned


def check_amount(amount: int) -> int:
    """A booking of zero says nothing, and a bool is almost certainly a bug."""
    if isinstance(amount, bool) or not isinstance(amount, int):
        raise TypeError("amount must be an int")
    if amount == 0:
        raise ValueError("amount must not be zero")
    return amount


def check_aware(moment: datetime, what: str = "time") -> datetime:
    """Naive datetimes are ambiguous between servers and backends, so the store refuses them."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"{what} must be a timezone-aware datetime, got a naive one")
    return moment
