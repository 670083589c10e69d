"""The rule-set seam (DESIGN §7): one protocol every rule set implements, and the registry.

The runtime, the channels, the store and the catalogues will speak only to `RuleSet`; a rule
set is a package under `vollmond/engine/` plus one line in `_REGISTRY`. The registry imports a
rule set's package only when it is first asked for, so this module never imports any rule set
and no rule set can form an import cycle through it.

>>> from vollmond.engine.ruleset import get_ruleset, ruleset_ids
>>> "standard" in ruleset_ids()
True
>>> get_ruleset("standard").id
'standard'
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Protocol, TypeVar

from vollmond.engine.core import Json, Rejection, Result, Rng, Viewer

StateT = TypeVar("StateT")
CommandT = TypeVar("CommandT")
TimerT = TypeVar("TimerT")
StateT_contra = TypeVar("StateT_contra", contravariant=True)
CommandT_co = TypeVar("CommandT_co", covariant=True)
OptionsT = TypeVar("OptionsT")
ViewT_co = TypeVar("ViewT_co", bound="TypedView", covariant=True)
RouteT_co = TypeVar("RouteT_co", covariant=True)


class UnknownRuleSetError(LookupError):
    """No rule set is registered under this id (a founding request or a stored game names it)."""


class OptionsDecodeError(ValueError):
    """Founding options in JSON that do not describe options of this rule set."""


class TypedView(Protocol):
    """A frozen value: what one viewer may know. `to_json` is what channels send."""

    def to_json(self) -> dict[str, Json]: ...


@dataclass(frozen=True, slots=True)
class MessageSpec:
    """The parameters one event or rejection code carries: the catalogues' placeholders.

    `required` are always present; `optional` only sometimes (a night step, a target).
    """

    required: frozenset[str] = frozenset()
    optional: frozenset[str] = frozenset()

    @property
    def names(self) -> frozenset[str]:
        return self.required | self.optional

    def admits(self, params: Mapping[str, Json]) -> bool:
        """Whether `params` has every required name and nothing undeclared."""
        keys = frozenset(params)
        return self.required <= keys <= self.names


@dataclass(frozen=True, slots=True)
class MessageSchema:
    """Every code a rule set emits or refuses with, and the parameter names of each."""

    events: Mapping[str, MessageSpec]
    rejections: Mapping[str, MessageSpec]


class Bot(Protocol[StateT_contra, CommandT_co]):
    """A player the machine plays; it decides from its own seat's legal commands only."""

    @property
    def seat(self) -> int: ...

    def choose(self, state: StateT_contra) -> CommandT_co | None:
        """One command to give now, or None to wait until something changes."""
        ...


class BotFactory(Protocol[StateT_contra, CommandT_co]):
    """Makes a bot for a seat; `rng` is the bot's own source of chance (a `random.Random`)."""

    def __call__(self, seat: int, rng: Any) -> Bot[StateT_contra, CommandT_co]: ...


class RuleSet(Protocol[StateT, CommandT, TimerT, OptionsT, ViewT_co, RouteT_co]):
    """One rule set behind one interface; every method is pure (no I/O, no clock).

    `apply` validates before it changes anything; after every accepted command the rule set
    settles deaths and victory and moves its phases on by itself, so the runtime only
    schedules the returned timers and sends the returned events.
    """

    @property
    def id(self) -> str: ...

    @property
    def messages(self) -> MessageSchema: ...

    @property
    def bots(self) -> Mapping[str, BotFactory[StateT, CommandT]]: ...

    def decode_options(self, data: Mapping[str, Any]) -> OptionsT:
        """Founding options from JSON; raises `OptionsDecodeError` on anything else."""
        ...

    def encode_options(self, options: OptionsT) -> dict[str, Json]: ...

    def new_game(self, options: OptionsT, rng: Rng) -> Result[StateT, TimerT]:
        """Deal (the deal is an event) and open the first phase; `TimerT` are the commands
        its timers send back."""
        ...

    def apply(
        self, state: StateT, command: CommandT, rng: Rng
    ) -> Result[StateT, TimerT] | Rejection: ...

    def legal(self, state: StateT, seat: int) -> Sequence[CommandT]: ...

    def view(self, state: StateT, viewer: Viewer) -> ViewT_co: ...

    def routing(self, state: StateT) -> Mapping[int | str, tuple[RouteT_co, ...]]: ...

    def is_over(self, state: StateT) -> bool: ...


AnyRuleSet = RuleSet[Any, Any, Any, Any, Any, Any]

_REGISTRY: Mapping[str, str] = MappingProxyType(
    {
        "standard": "vollmond.engine.standard.ruleset",
        "classic": "vollmond.engine.classic.ruleset",
        "mayor": "vollmond.engine.mayor.ruleset",
    }
)
"""Rule-set id → the module that defines `RULESET`. Adding a rule set is one line here."""


def ruleset_ids() -> tuple[str, ...]:
    return tuple(_REGISTRY)


def get_ruleset(ruleset_id: str) -> AnyRuleSet:
    """The rule set registered as `ruleset_id`; `UnknownRuleSetError` if there is none."""
    module_name = _REGISTRY.get(ruleset_id)
    if module_name is None:
        raise UnknownRuleSetError(ruleset_id)
    ruleset: AnyRuleSet = importlib.import_module(module_name).RULESET
    return ruleset
