"""Karma deductions for sanctions and false alarms (P3), booked to the existing karma ledger.

The amounts are operator settings. The karma ledger is kept per account (DESIGN.md §7
"Identity": a linked phone identity shares it) or per phone-only identity (issue 10); a guest
known only by a house has no ledger, so nothing is booked for them and the caller learns so
(None).
"""

from __future__ import annotations

import enum
from datetime import datetime

from vollmond.settings.moderation import ModerationSettings
from vollmond.store.db import Sessions
from vollmond.store.karma import KarmaEntry, karma_change
from vollmond.store.owners import OwnerLike


class Penalty(enum.StrEnum):
    """What karma is deducted for; the value is the ledger's reason text."""

    WARN = "moderation: warning"
    MUTE = "moderation: muted"
    KICK = "moderation: kicked"
    BAN = "moderation: banned"
    FALSE_ALARM = "moderation: false operator call"


def deduction(penalty: Penalty, settings: ModerationSettings) -> int:
    """The positive number of karma points `penalty` costs."""
    amounts = {
        Penalty.WARN: settings.karma_warn,
        Penalty.MUTE: settings.karma_mute,
        Penalty.KICK: settings.karma_kick,
        Penalty.BAN: settings.karma_ban,
        Penalty.FALSE_ALARM: settings.karma_false_alarm,
    }
    return amounts[penalty]


async def book_penalty(
    sessions: Sessions,
    settings: ModerationSettings,
    who: OwnerLike | None,
    penalty: Penalty,
    *,
    game_id: str | None,
    now: datetime,
) -> KarmaEntry | None:
    """Deduct the penalty's karma from the account (or a phone-only identity's own ledger);
    None if there is no ledger or no cost."""
    amount = deduction(penalty, settings)
    if who is None or amount == 0:
        return None
    return await karma_change(sessions, who, -amount, penalty.value, game_id=game_id, now=now)
