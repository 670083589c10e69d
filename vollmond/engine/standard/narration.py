"""The night walk: one spoken step per night role in the deck, whether its holder lives or not.

The engine runs a night as one phase in which every role acts when it likes; a telephone
caller, though, expects a narrator ("the seer wakes ..."). The steps come from the deck's
*public* composition (the game_started event), in a fixed order, never from the living roles:
a table whose seer died hears exactly the same walk, with the same words and so the same
duration, as a table whose seer lives — timing reveals nothing. Which roles act at night, and
in which order they are walked, is rule knowledge, so it lives here and the telephone asks for
it through the protocol (`RuleSet.night_walk`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from vollmond.engine.standard.queries import spec
from vollmond.engine.standard.types import NightStep, Phase, RoleId, Trait

NIGHT_ORDER: Final[tuple[str, ...]] = (
    "doctor",
    "knight",
    "trapper",
    "evil",
    "witch",
    "seer",
    "night_owl",
    "necromancer",
    "medium",
)
"""Roles with a night step, in the order the narrator walks them (main step of a night)."""


def acts_at_night(role_key: str) -> bool:
    """Whether the role acts in a night's main step (a step of its own, like the steal, is
    announced by the engine and not walked)."""
    role = spec(RoleId(role_key))
    if role.has(Trait.LEARNS_BANISHED):
        return True
    return any(
        Phase.NIGHT in ability.phases and NightStep.MAIN in ability.night_steps
        for ability in role.abilities
    )


def night_steps(composition: Mapping[str, object]) -> list[str]:
    """The role keys walked in a main night step, from the deck's public composition.

    The vagabond's steal has its own step (the engine's steal step in night 1), so it is not
    walked here (`acts_at_night`). Roles the fixed order does not know yet come last, in key
    order.
    """
    known = {role.value for role in RoleId}
    present = {key for key, count in composition.items() if count and key in known}
    steps = [key for key in NIGHT_ORDER if key in present]
    extra = sorted(key for key in present if key not in NIGHT_ORDER and acts_at_night(key))
    return steps + extra
