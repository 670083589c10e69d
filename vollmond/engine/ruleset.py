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
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Protocol, TypeVar, runtime_checkable

from vollmond.engine.commandcodec import CommandCodec, CommandDecodeError, codec_of
from vollmond.engine.core import Json, Rejection, Result, Rng, Viewer
from vollmond.engine.kit.routing import RoomKind, WhereAmI, place_by_routes

# The command codec is re-exported: rule sets build theirs with `codec_of`, consumers catch
# its error, and both import only this module.
__all__ = [
    "SPECTATORS",
    "AnyRuleSet",
    "Bot",
    "BotFactory",
    "ChecksDecks",
    "CommandCodec",
    "CommandDecodeError",
    "HasCalls",
    "HasKeypad",
    "Key",
    "KeyAction",
    "Listener",
    "MessageSchema",
    "MessageSpec",
    "OptionsDecodeError",
    "PlacesListeners",
    "Press",
    "RoomKind",
    "Route",
    "RoutingTable",
    "RuleSet",
    "ScoresSeats",
    "SeatResult",
    "Simulated",
    "TypedView",
    "UnknownRuleSetError",
    "WhereAmI",
    "codec_of",
    "get_ruleset",
    "place_of",
    "ruleset_ids",
]

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


SPECTATORS = "spectators"
"""The routing table's listener for everybody watching (every rule set uses this key)."""

Listener = int | str
"""A seat (int) or `SPECTATORS`."""


class Route(Protocol):
    """One source a listener hears, and how loud (0.0 to 1.0)."""

    @property
    def source(self) -> int: ...

    @property
    def gain(self) -> float: ...


RoutingTable = Mapping[Listener, tuple[Route, ...]]
"""Who hears whom: what a rule set's `routing` returns and what the voice mixer plays."""


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


@dataclass(frozen=True, slots=True)
class Simulated:
    """One whole bot game, as the balance figures need it (`vollmond simulate`)."""

    winners: tuple[str, ...]
    """The winning sides (more than one when, say, the lovers win with a team)."""
    rounds: int
    commands: int


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


@runtime_checkable
class PlacesListeners(Protocol):
    """A rule set that names its rooms itself (a call, half listening, the night room); the
    voice page shows the name. Others get `place_by_routes`, read from the listener's routes."""

    def place(self, state: Any, listener: Listener) -> WhereAmI:
        """The room `listener` is in, telling them nothing their own view does not."""
        ...


class Key(StrEnum):
    """What a caller can type in a game, as a rule set sees it (the keypad's grammar is the
    telephone's; docs/phone-keys.md): a rule set maps its commands onto these, never onto
    key strings, so the phone needs no rule set's names and a rule set no telephone."""

    HOUSE = "house"
    """``NN#``: a house number (or a numbered choice such as a card)."""
    NOBODY = "nobody"
    """``0#``, ``##`` or ``#`` and a pause: nobody, abstain, pass."""
    YES = "yes"
    """``1`` (at once, no ``#`` needed)."""
    NO = "no"
    """``2`` (at once)."""
    DONE = "done"
    """``*#``: done, end my turn (my turn to speak: an interjection)."""
    DAY_HOUSE = "day_house"
    """``*NN#`` (``**NN#`` for any house, needed for 7 and 9): a house for an action by day,
    apart from the day's nominations and votes (the hunter's shot, passing one's vote)."""
    CALL = "call"
    """``*0NN#``: phone house NN (a rule set with `HasCalls`)."""
    HANG_UP = "hang_up"
    """``*0#``, or ``#`` in a call: hang up (while it rings, ``#`` is `NO`)."""
    TOGGLE = "toggle"
    """``*0*`` in a call: between the call alone and half listening to the market."""


@dataclass(frozen=True, slots=True)
class Press:
    """One key entry: its kind and, for `Key.HOUSE`, the number typed."""

    key: Key
    number: int | None = None


@dataclass(frozen=True, slots=True)
class KeyAction:
    """One legal command and the entries that give it (Amor's two lovers are two houses in a
    row). `offer` groups commands said together ("Zeig auf euer Opfer: 2, 3 oder 5"); the
    phone says the catalogue text ``<ruleset>.phone.can.<offer>`` with the houses, and
    ``<ruleset>.phone.do.<offer>`` when one entry means several commands and it must ask."""

    command: Any
    presses: tuple[Press, ...]
    offer: str


@runtime_checkable
class HasKeypad(Protocol):
    """A rule set playable by telephone with the generic game line: it says which entries
    give which of a seat's legal commands. A rule set without it has no keys by phone."""

    def keypad(self, state: Any, seat: int) -> Sequence[KeyAction]:
        """The seat's legal commands now, each with its entries (empty: nothing to do)."""
        ...

    def key_probe(self, state: Any, seat: int, presses: Sequence[Press]) -> Any | None:
        """A command the entries would mean if it were allowed now (None: they mean nothing
        in this phase), so that a refusal can be spoken with the rules' own reason."""
        ...


@runtime_checkable
class HasCalls(HasKeypad, Protocol):
    """A rule set whose players phone each other during the game (a call rings, is answered,
    declined or missed, and ends) and speak up out of turn (interjections). Its keypad gives
    those with the call keys (`Key.CALL`, `Key.HANG_UP`, `Key.TOGGLE`, `Key.YES`/`Key.NO`
    while it rings, `Key.DONE` to interject) and day actions with `Key.DAY_HOUSE`; the phone
    plays it with its call line, which rings the callee's telephone and speaks each ability
    by the world's name of its action. Offers are named as that line reads them:
    ``night.<action>`` and ``day.<action>`` for abilities, else ``nominate``, ``vote``,
    ``abstain``, ``answer``, ``hang_up``, ``toggle``, ``call``, ``interject``; phases are
    named (`phase_name`) ``night`` and ``vote`` where that line reminds a silent caller."""

    def ring_seconds(self, options: Any) -> float:
        """How long a call rings before it is missed (a public founding option)."""
        ...


@dataclass(frozen=True, slots=True)
class SeatResult:
    """What one seat did in a finished game: what karma is earned for (P3)."""

    won: bool
    survived: bool
    special_role: bool
    votes: int
    """Votes the seat cast on the day's banishments (not the night's)."""
    left: bool
    """The seat left the running game (its own `leave` command)."""


@runtime_checkable
class ScoresSeats(Protocol):
    """A rule set that can say, for its finished game, what each seat did. Karma needs it,
    the runtime does not; a rule set without it earns its players no karma from games."""

    def seat_results(self, state: Any, commands: Sequence[Any]) -> Mapping[int, SeatResult]:
        """Each seat's result, from the final state and the game's accepted commands (the
        log, in order, timers included)."""
        ...


@runtime_checkable
class ChecksDecks(Protocol):
    """A rule set that can tell a hand-mixed deck which would make an unfair game (no evil
    card, an evil majority at the start, ...) before it is founded; the web founding refuses
    it with the code. A rule set without it founds any deck its options accept."""

    def deck_problem(self, options: Any) -> str | None:
        """The error code (a web error in the catalogue) of the first thing wrong with the
        options' deck, or None for a fair deck."""
        ...


@dataclass(frozen=True, slots=True)
class SeatedGame:
    """One bot game with a named bot per seat: which seats' sides won (`simulate --pit`)."""

    winners: frozenset[int]
    rounds: int
    commands: int


@runtime_checkable
class SeatsBots(Protocol):
    """A rule set that can seat different bots at one table, by their names in `bots`; the
    pit of `vollmond simulate --pit` (one bot against another) needs it, the runtime does not,
    so it is a protocol of its own rather than a duty of every rule set."""

    def simulate_seated(self, options: Any, seed: int, bots: Mapping[int, str]) -> SeatedGame:
        """One game with `bots[seat]` (a name in `RuleSet.bots`) playing each seat; seats
        not named get the rule set's default bot. Deterministic per (options, seed, bots)."""
        ...


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

    # -- what the runtime needs to run, log and resume any rule set's game ------------------
    @property
    def min_players(self) -> int: ...

    @property
    def max_players(self) -> int: ...

    def validate(self, state: StateT, command: CommandT) -> Rejection | None:
        """Why `command` would be refused now, or None; changes nothing (a timer read back
        from the log is rescheduled only if it is still valid)."""
        ...

    def rng_for(self, seed: int, index: int) -> Rng:
        """The random stream of command `index` of a game dealt with `seed` (0 deals), so a
        game replays exactly from its command log."""
        ...

    def encode_command(self, command: CommandT) -> dict[str, Json]: ...

    def decode_command(self, data: object, *, players_only: bool = False) -> CommandT:
        """The inverse of `encode_command`; raises `CommandDecodeError` on anything else.
        `players_only` refuses the timer commands only the runtime may give."""
        ...

    def actor_of(self, command: CommandT) -> int | None:
        """The seat that gives a player's command; None for a timer's."""
        ...

    def leave(self, seat: int) -> CommandT:
        """The command by which `seat` leaves the game (presence, a hung-up phone)."""
        ...

    def phase_seq(self, state: StateT) -> int:
        """Grows by one with every phase (or stage): a changed value means a new phase."""
        ...

    def phase_name(self, state: StateT) -> str:
        """The current phase's name as the lobby and the clock show it ("over" when over)."""
        ...

    def views_follow_events(self, before: StateT, after: StateT) -> bool:
        """Whether this change (within one phase) shows only to the viewers its events reach.

        When it does, a viewer that none of the change's events reached sees the same view
        after it as before, and the runtime does not rebuild that view (issue 16: most
        night actions reach one or two seats of a table). False is always correct, and
        costs only the rebuilding; tests/engine/test_views_follow_events.py holds every rule
        set's answer to its views over whole bot games."""
        ...

    def timer_phase(self, timer: TimerT) -> int | None:
        """The `phase_seq` a timer ends (its phase timeout), or None for other timers."""
        ...

    def night_walk(self, composition: Mapping[str, Json]) -> Sequence[str]:
        """The role keys a narrator walks through in a night (by telephone), from the deck's
        public composition only, dead holders included (timing must reveal nothing). Empty
        when the rule set's night steps are stages of their own, announced by its events."""
        ...

    def simulate(self, options: OptionsT, seed: int) -> Simulated:
        """One game with the rule set's own bot in every seat and its timers fired when no bot
        acts; the same (options, seed) always plays the same game."""
        ...


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


def load_rulesets() -> None:
    """Import every registered rule set now. A service calls it as it starts: imported on
    first use instead, a caller's first choice of another rule set held that process's event
    loop (every call in it) for the import, 0.26 s on a loaded machine and once 10 s."""
    for ruleset_id in _REGISTRY:
        get_ruleset(ruleset_id)


def get_ruleset(ruleset_id: str) -> AnyRuleSet:
    """The rule set registered as `ruleset_id`; `UnknownRuleSetError` if there is none."""
    module_name = _REGISTRY.get(ruleset_id)
    if module_name is None:
        raise UnknownRuleSetError(ruleset_id)
    ruleset: AnyRuleSet = importlib.import_module(module_name).RULESET
    return ruleset


def place_of(ruleset: AnyRuleSet, state: Any, listener: Listener) -> WhereAmI:
    """The room a listener is in, by the rule set's own names where it has them."""
    if isinstance(ruleset, PlacesListeners):
        return ruleset.place(state, listener)
    night = ruleset.phase_name(state).startswith("night")
    return place_by_routes(ruleset.routing(state), listener, night=night)
