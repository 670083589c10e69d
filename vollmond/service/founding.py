"""Founding options against the operators' bounds (W3, C8), checked before anything is stored.

The engine only refuses options that cannot make a game, and only when it deals; the service
must refuse earlier, at founding, and also what the operators do not allow (long calls,
zero-second phases, a custom deck of a billion cards).
"""

from __future__ import annotations

from collections.abc import Mapping

from vollmond.engine.core import Json
from vollmond.service.policy import Policy


def _number(value: Json) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def founding_problem(policy: Policy, options: Mapping[str, Json]) -> str | None:
    """The error code for the first thing the operators do not allow, or None.

    `options` are the rule set's founding options in their JSON form (`encode_options`):
    every rule set names its deck, custom roles, durations and the like alike, so one check
    serves them all and needs no rule set's types; a rule set without calls skips that part.
    """
    if options.get("deck") == "custom":
        roles = options.get("custom_roles") or ()
        assert isinstance(roles, list | tuple)
        counts = [int(_number(entry[1])) for entry in roles if isinstance(entry, list | tuple)]
        if any(not 0 <= n <= policy.max_players for n in counts):
            return "custom_deck_invalid"
        if sum(counts) == 0:
            return "custom_deck_empty"
    calls, call_bounds = options.get("calls"), policy.calls
    if isinstance(calls, Mapping) and not (
        0 < _number(calls.get("max_duration_s")) <= call_bounds.max_duration_s
        and 0 <= _number(calls.get("per_night")) <= call_bounds.max_per_night
        and 0 < _number(calls.get("ring_s")) <= call_bounds.max_duration_s
    ):
        return "call_settings_out_of_bounds"
    bounds = policy.durations
    durations = options.get("durations")
    if isinstance(durations, Mapping) and not all(
        bounds.min_s <= _number(value) <= bounds.max_s for value in durations.values()
    ):
        return "durations_out_of_bounds"
    if _number(options.get("stalemate_rounds", 1)) < 1:
        return "stalemate_rounds_out_of_bounds"
    return None
