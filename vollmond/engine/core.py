"""Rule-set independent building blocks: audiences, events, rejections, results, timers.

Every rule set (the seed-004 standard rules now; classic, mayor, clocktower and the card game
later) speaks in these types, so the runtime, the store and every channel treat them alike.
Nothing here does I/O, reads a clock or draws random numbers.
"""

from __future__ import annotations

import dataclasses
import inspect
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import partial
from types import MappingProxyType
from typing import Any, Generic, NoReturn, Protocol, TypeVar

JsonScalar = str | int | float | bool | None
Json = JsonScalar | Sequence["Json"] | Mapping[str, "Json"]


T = TypeVar("T")
V = TypeVar("V")

Setter = Callable[[Any, Any], None]


class _Kit:
    """What `evolve`, `overwrite` and `builder` use for one value class, made once."""

    __slots__ = ("evolve", "setters", "thawed")

    def __init__(
        self, setters: Mapping[str, Setter], thawed: type | None, evolve: Callable[..., Any]
    ) -> None:
        self.setters = setters
        self.thawed = thawed
        self.evolve = evolve


_KITS: dict[type, _Kit] = {}


def _setters(cls: type) -> dict[str, Setter]:
    """Each field's own setter: the slot's descriptor (`__set__`: a frozen class's
    `__setattr__` is not in its way, and it is about twice as fast as calling
    `object.__setattr__` with the name), or for a field without a slot `object.__setattr__`
    with its name."""
    setters: dict[str, Setter] = {}
    for f in dataclasses.fields(cls):
        slot = inspect.getattr_static(cls, f.name, None)
        if isinstance(slot, types.MemberDescriptorType):
            setters[f.name] = slot.__set__
        else:
            setters[f.name] = partial(_set_named, f.name)
    return setters


def _set_named(name: str, obj: object, value: object) -> None:
    object.__setattr__(obj, name, value)


def _thawed(cls: type, names: tuple[str, ...]) -> type | None:
    """A twin of a frozen, slotted class: the same bases and slots, so the same memory
    layout, but without the frozen `__setattr__`. A new value is made as a twin, its fields
    written with plain attribute stores (which the interpreter specialises for slots; a
    slot descriptor's `__set__` is a full call per field), and then turned into `cls` by
    assigning `__class__` (which Python allows between classes of one layout), all inside
    the one function that made it, before anyone sees it: what leaves is an ordinary frozen
    instance of `cls`. None when `cls` has no such twin (fields not all its own slots, a
    base with a `__setattr__` of its own): then the slots' setters are used."""
    own = cls.__dict__.get("__slots__")
    if own is None or tuple(own) != names:
        return None
    namespace: dict[str, Any] = {"__slots__": names}
    if "__orig_bases__" in cls.__dict__:  # a generic class names its parameters there
        namespace["__orig_bases__"] = cls.__dict__["__orig_bases__"]
    try:
        twin = type(f"{cls.__name__}Draft", cls.__bases__, namespace)
        probe: Any = object.__new__(twin)
        probe.__class__ = cls  # refused unless the layouts are the same
    except TypeError:
        return None
    plain: Any = object.__setattr__
    return twin if getattr(twin, "__setattr__", None) is plain else None


def _kit(cls: type) -> _Kit:
    """A class's setters, twin and `evolve`, written for its fields (as `dataclasses` writes
    `__init__`): one unrolled statement per field copies it (a plain attribute store on the
    twin), then the changes are set through their slots' setters. The changes come as one
    dictionary: keyword parameters with defaults, one per field, cost a lookup of the
    defaults for every field not given (most of them), about as much as the copy itself."""
    setters = _setters(cls)
    names = tuple(setters)
    twin = _thawed(cls, names)
    lines = ["def evolve(value, changes):", "    new = new_(twin or cls)"]
    for i, name in enumerate(names):
        copied = f"value.{name}"
        lines.append(f"    new.{name} = {copied}" if twin else f"    set_{i}(new, {copied})")
    if twin:
        lines.append("    new.__class__ = cls")
    lines += [
        "    for name, changed in changes.items():",
        "        setter = setters.get(name)",
        "        if setter is None:",
        "            refuse(cls, changes, setters)",
        "        setter(new, changed)",
        "    return new",
    ]
    namespace: dict[str, Any] = {
        "new_": object.__new__,
        "cls": cls,
        "twin": twin,
        "setters": setters,
        "refuse": _refuse,
    }
    namespace.update((f"set_{i}", setters[name]) for i, name in enumerate(names))
    exec("\n".join(lines), namespace)  # code made from the class's own field names
    kit = _KITS[cls] = _Kit(MappingProxyType(setters), twin, namespace["evolve"])
    return kit


def _refuse(cls: type, changes: Mapping[str, Any], setters: Mapping[str, Setter]) -> NoReturn:
    unknown = sorted(changes.keys() - setters.keys())
    raise TypeError(f"{cls.__name__} has no field(s) {unknown}")


def builder(cls: Callable[..., V]) -> Callable[..., V]:
    """A constructor of `cls` that takes every field, in order, by position, and sets them
    without running `__init__` (through the class's twin, see `_thawed`, or the slots'
    setters; for a frozen, slotted value class without `__post_init__`, two to three times
    as fast): for the values made on every command (events, results, timers)."""
    assert isinstance(cls, type)
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__} has a __post_init__, which a builder would skip")
    kit = _KITS.get(cls) or _kit(cls)
    names = tuple(kit.setters)
    lines = [f"def build({', '.join(names)}):", "    new = new_(twin or cls)"]
    for i, name in enumerate(names):
        lines.append(f"    new.{name} = {name}" if kit.thawed else f"    set_{i}(new, {name})")
    if kit.thawed:
        lines.append("    new.__class__ = cls")
    lines.append("    return new")
    namespace: dict[str, Any] = {"new_": object.__new__, "cls": cls, "twin": kit.thawed}
    namespace.update((f"set_{i}", kit.setters[name]) for i, name in enumerate(names))
    exec("\n".join(lines), namespace)  # code made from the class's own field names
    built: Callable[..., V] = namespace["build"]
    return built


def evolve(value: V, **changes: Any) -> V:
    """`dataclasses.replace` for the engine's frozen, slotted value classes, without running
    `__init__`: a function written for the class's fields copies them (plain stores on the
    class's twin) and sets the changes. The state is copied on every command: a copy and a
    second pass for the changes, each field set by a call of its slot's setter, cost about
    twice the instructions (a 16-field state; docs/decisions.md, helper "engine4"). Only for
    classes without `__post_init__`; a name that is not a field is refused (`TypeError`), as
    `dataclasses.replace` does."""
    made: V = (_KITS.get(type(value)) or _kit(type(value))).evolve(value, changes)
    return made


def evolve_with(value: V, changes: Mapping[str, Any]) -> V:
    """`evolve` with the changes as a mapping: for a caller that has them as one already
    (a transaction's `change`), without passing them on as keywords again."""
    made: V = (_KITS.get(type(value)) or _kit(type(value))).evolve(value, changes)
    return made


def overwrite(draft: object, changes: Mapping[str, Any]) -> None:
    """Set fields of a frozen value in place: only for a copy nobody else has seen yet (one
    `evolve` made, a transaction's draft). A name that is not a field is refused."""
    setters = (_KITS.get(type(draft)) or _kit(type(draft))).setters
    for name, changed in changes.items():
        setter = setters.get(name)
        if setter is None:
            _refuse(type(draft), changes, setters)
        setter(draft, changed)


class Rng(Protocol):
    """The only source of chance the rules may use (a `random.Random` fits).

    Passed into every call, never global, so a game replays exactly from its log.
    """

    def choice(self, seq: Sequence[T]) -> T: ...

    def shuffle(self, x: list[Any]) -> None: ...

    def sample(self, population: Sequence[T], k: int) -> list[T]: ...


class ViewerKind(StrEnum):
    """Who is looking: a seated player, a spectator or an operator (moderation)."""

    PLAYER = "player"
    SPECTATOR = "spectator"
    OPERATOR = "operator"


@dataclass(frozen=True, slots=True)
class Viewer:
    """The one perspective every projection is computed for; channels never filter secrets."""

    kind: ViewerKind
    seat: int | None = None

    @staticmethod
    def player(seat: int) -> Viewer:
        return Viewer(ViewerKind.PLAYER, seat)

    @staticmethod
    def spectator() -> Viewer:
        return Viewer(ViewerKind.SPECTATOR)

    @staticmethod
    def operator() -> Viewer:
        return Viewer(ViewerKind.OPERATOR)


class AudienceKind(StrEnum):
    """Public reaches every player, spectator and operator; seats only the listed players;
    system only the log and the runtime (the full deal, never sent to a client)."""

    PUBLIC = "public"
    SEATS = "seats"
    SYSTEM = "system"


_SEATS = AudienceKind.SEATS
"""Read for every private event: a module constant (an enum's class attribute is slow on 3.11,
see standard/types.py)."""


@dataclass(frozen=True, slots=True)
class Audience:
    """Who may receive an event, fixed when the event is made.

    Rooms (night room, a call) are resolved to concrete seats at that moment, because
    membership changes (a vagabond may steal his way into the night room).
    """

    kind: AudienceKind
    seats: frozenset[int] = frozenset()

    @staticmethod
    def public() -> Audience:
        return _PUBLIC

    @staticmethod
    def to(*seats: int) -> Audience:
        if len(seats) == 1:  # most private events go to one seat: made once per seat
            one = _TO_ONE.get(seats[0])
            if one is not None:
                return one
        return _audience(_SEATS, frozenset(seats))

    @staticmethod
    def group(seats: frozenset[int] | set[int] | tuple[int, ...]) -> Audience:
        return _audience(_SEATS, frozenset(seats))

    @staticmethod
    def system() -> Audience:
        return _SYSTEM

    def includes(self, viewer: Viewer) -> bool:
        if self.kind is AudienceKind.PUBLIC:
            return True
        if self.kind is AudienceKind.SYSTEM:
            return False
        return viewer.kind is ViewerKind.PLAYER and viewer.seat in self.seats

    def to_json(self) -> dict[str, Json]:
        return {"kind": self.kind.value, "seats": sorted(self.seats)}


_audience = builder(Audience)  # a private event's audience is made on most commands
_PUBLIC = Audience(AudienceKind.PUBLIC)
_TO_ONE: Mapping[int, Audience] = MappingProxyType(
    {seat: Audience(AudienceKind.SEATS, frozenset((seat,))) for seat in range(1, 257)}
)
"""`Audience.to` one seat, made once (audiences are immutable values): table sizes go to 200."""
_SYSTEM = Audience(AudienceKind.SYSTEM)


@dataclass(frozen=True, slots=True)
class Event:
    """A message code with parameters; channels render it (speech, text, JSON), never the engine."""

    code: str
    audience: Audience
    params: Mapping[str, Json] = field(default_factory=dict)

    def to_json(self) -> dict[str, Json]:
        return {"code": self.code, "audience": self.audience.to_json(), "params": dict(self.params)}


@dataclass(frozen=True, slots=True)
class Rejection:
    """Why a command was refused. A rejection never changes the state."""

    code: str
    params: Mapping[str, Json] = field(default_factory=dict)


CommandT = TypeVar("CommandT")


@dataclass(frozen=True, slots=True)
class Timer(Generic[CommandT]):
    """Ask the runtime to send `command` after `delay_s` seconds; time enters only this way."""

    delay_s: float
    command: CommandT


StateT = TypeVar("StateT")


@dataclass(frozen=True, slots=True)
class Result(Generic[StateT, CommandT]):
    """The outcome of an accepted command: the new state, its events, and timers to schedule."""

    state: StateT
    events: tuple[Event, ...] = ()
    timers: tuple[Timer[CommandT], ...] = ()
