"""Founding options against the operators' bounds (W3, C8), checked before anything is stored.

The engine only refuses options that cannot make a game, and only when it deals; the service
must refuse earlier, at founding, and also what the operators do not allow (long calls,
zero-second phases, a custom deck of a billion cards).
"""

from __future__ import annotations

from dataclasses import fields

from vollmond.engine.standard import GameOptions
from vollmond.engine.standard.types import DeckId
from vollmond.service.policy import Policy


def founding_problem(policy: Policy, options: GameOptions) -> str | None:
    """The error code for the first thing the operators do not allow, or None."""
    if options.deck is DeckId.CUSTOM:
        counts = [n for _, n in options.custom_roles]
        if any(not 0 <= n <= policy.max_players for n in counts):
            return "custom_deck_invalid"
        if sum(counts) == 0:
            return "custom_deck_empty"
    calls, call_bounds = options.calls, policy.calls
    if not (
        0 < calls.max_duration_s <= call_bounds.max_duration_s
        and 0 <= calls.per_night <= call_bounds.max_per_night
        and 0 < calls.ring_s <= call_bounds.max_duration_s
    ):
        return "call_settings_out_of_bounds"
    bounds = policy.durations
    for field in fields(options.durations):
        if not bounds.min_s <= getattr(options.durations, field.name) <= bounds.max_s:
            return "durations_out_of_bounds"
    if options.stalemate_rounds < 1:
        return "stalemate_rounds_out_of_bounds"
    return None
