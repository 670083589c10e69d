"""Load the ten themed worlds from the TOML files in ``vollmond/worlds/data``.

All worlds share one rule set; only names, colours and taglines differ. Keeping them as
data (not code) means a translator or designer can fix a name without touching Python, and
the engine can stay world-agnostic by speaking only in generic keys (``"seer"``,
``"full_moon"``) that are turned into words at the edge (telephone prompts, web client).

The loader validates every file strictly when it is first read: a missing or misspelt key
should fail at start-up or in the test suite, not halfway through a game when a prompt is
being rendered.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from types import MappingProxyType
from typing import Final, Literal, TypeGuard

Language = Literal["de", "en"]
"""A language the worlds are written in; German is the source, English a translation."""

LANGUAGES: Final[tuple[Language, ...]] = ("de", "en")
"""Every supported language, German first because the seed text (the source of truth) is
German and it is the default for the telephone service."""

ROLE_KEYS: Final[tuple[str, ...]] = (
    "evil",
    "seer",
    "doctor",
    "witch",
    "night_owl",
    "hunter",
    "knight",
    "medium",
    "necromancer",
    "trapper",
    "twin",
    "defector",
    "fox",
    "vagabond",
    "vote_giver",
    "princess",
    "creeper",
    "filler",
    "lovers",
)
"""Generic role keys the engine uses; each world maps every one of them to a name."""

DECK_KEYS: Final[tuple[str, ...]] = (
    "auto",
    "starter",
    "loner",
    "full_moon",
    "may_dance",
    "cauldron",
    "tribunal",
    "custom",
)
"""Generic role-deck keys, in the order the seed lists the decks (shown in this order)."""

NAME_KEYS: Final[tuple[str, ...]] = (
    "world",
    "place",
    "evil_singular",
    "evil_plural",
    "evil_plural_dative",
    "evil_group",
    "night_room",
    "village",
    "tagline",
)
"""Plain-string fields of every ``[de]`` / ``[en]`` table (see :class:`WorldNames`)."""

COLOR_KEYS: Final[tuple[str, ...]] = ("primary", "accent", "background")

_TOP_KEYS: Final[frozenset[str]] = frozenset({"id", "order", "colors", *LANGUAGES})
_OPTIONAL_TOP_KEYS: Final[frozenset[str]] = frozenset({"ruleset"})
STANDARD_RULESET: Final[str] = "standard"
"""The rule set a world file belongs to when it names none (the ten worlds of seed 004)."""
_HEX_COLOR: Final[re.Pattern[str]] = re.compile(r"#[0-9A-Fa-f]{6}")
_DATA_PACKAGE: Final[str] = "vollmond.worlds.data"


class WorldDataError(ValueError):
    """A world TOML file is malformed; raised at load time so bad data never reaches a game."""


class WorldLookupError(LookupError):
    """Base for "asked for something that does not exist"; lets callers catch all of them."""


class UnknownWorldError(WorldLookupError):
    """No world has the requested id (e.g. a stale id stored with an old game or a typo)."""

    def __init__(self, world_id: str) -> None:
        self.world_id = world_id
        super().__init__(f"unknown world {world_id!r}; known worlds: {', '.join(world_ids())}")


class UnknownLanguageError(WorldLookupError):
    """The requested language is not one of :data:`LANGUAGES`."""

    def __init__(self, lang: str) -> None:
        self.lang = lang
        super().__init__(f"unknown language {lang!r}; supported: {', '.join(LANGUAGES)}")


class UnknownRoleError(WorldLookupError):
    """The role key is not one of :data:`ROLE_KEYS`."""

    def __init__(self, role_key: str) -> None:
        self.role_key = role_key
        super().__init__(f"unknown role key {role_key!r}")


class UnknownDeckError(WorldLookupError):
    """The deck key is not one of :data:`DECK_KEYS`."""

    def __init__(self, deck_key: str) -> None:
        self.deck_key = deck_key
        super().__init__(f"unknown deck key {deck_key!r}")


def is_language(value: str) -> TypeGuard[Language]:
    """Narrow a free-form string (from a request or a user profile) to :data:`Language`."""
    return value in LANGUAGES


@dataclass(frozen=True, slots=True)
class Colors:
    """A world's visual identity for the web client, as ``#RRGGBB`` strings."""

    primary: str
    accent: str
    background: str


@dataclass(frozen=True, slots=True)
class WorldNames:
    """Every display name of one world in one language.

    ``evil_plural_dative`` exists because German inflects the plural after prepositions
    ("gehört zu den Werwölfen", "von den Infizierten"); in English it equals ``evil_plural``.
    ``village`` is the good side as named in the victory line ("Das Dorf gewinnt ...").
    ``roles`` and ``decks`` are read-only mappings keyed by :data:`ROLE_KEYS` and
    :data:`DECK_KEYS`.
    """

    lang: Language
    world: str
    place: str
    evil_singular: str
    evil_plural: str
    evil_plural_dative: str
    evil_group: str
    night_room: str
    village: str
    tagline: str
    roles: Mapping[str, str]
    decks: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class World:
    """One themed world: an id the engine stores, a display order and its names per language."""

    id: str
    order: int
    colors: Colors
    names: Mapping[Language, WorldNames]
    ruleset: str = STANDARD_RULESET
    """The rule set whose games play in this world. The standard worlds name every key of
    :data:`ROLE_KEYS` and :data:`DECK_KEYS`; a world of another rule set names that rule
    set's own roles and decks (the same keys in every language)."""

    def names_in(self, lang: str = "de") -> WorldNames:
        """All names in ``lang``; raises :class:`UnknownLanguageError` for other languages."""
        if not is_language(lang):
            raise UnknownLanguageError(lang)
        return self.names[lang]

    def role_name(self, role_key: str, lang: str = "de") -> str:
        """The world's name for a generic role key, e.g. ``("seer", "de")`` -> "Seherin"."""
        names = self.names_in(lang)
        try:
            return names.roles[role_key]
        except KeyError:
            raise UnknownRoleError(role_key) from None

    def deck_name(self, deck_key: str, lang: str = "de") -> str:
        """The world's name for a generic deck key, e.g. ``("starter", "de")`` -> "Dorffest"."""
        names = self.names_in(lang)
        try:
            return names.decks[deck_key]
        except KeyError:
            raise UnknownDeckError(deck_key) from None


@cache
def load_worlds(ruleset: str = STANDARD_RULESET) -> Mapping[str, World]:
    """The worlds of one rule set (by default the standard one) by id, ordered by their
    ``order`` field (1..N within each rule set).

    Cached because the data ships with the package and never changes at runtime; the result
    is a read-only mapping so no caller can corrupt the shared copy.
    """
    worlds = [w for w in _all_worlds().values() if w.ruleset == ruleset]
    return MappingProxyType({w.id: w for w in worlds})


@cache
def _all_worlds() -> Mapping[str, World]:
    """Every world file of every rule set, checked; orders are 1..N per rule set."""
    data_dir = files(_DATA_PACKAGE)
    worlds: list[World] = []
    for entry in data_dir.iterdir():
        if not entry.name.endswith(".toml"):
            continue
        source = f"{_DATA_PACKAGE}/{entry.name}"
        try:
            raw = tomllib.loads(entry.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise WorldDataError(f"{source}: invalid TOML: {exc}") from exc
        world = _parse_world(raw, source)
        if world.id != entry.name.removesuffix(".toml"):
            raise WorldDataError(f"{source}: id {world.id!r} does not match the file name")
        worlds.append(world)
    if not worlds:
        raise WorldDataError(f"no world files found in {_DATA_PACKAGE}")
    worlds.sort(key=lambda w: (w.ruleset, w.order))
    for ruleset in sorted({w.ruleset for w in worlds}):
        orders = [w.order for w in worlds if w.ruleset == ruleset]
        if orders != list(range(1, len(orders) + 1)):
            raise WorldDataError(
                f"{ruleset} world orders must be 1..{len(orders)} without gaps: {orders}"
            )
    return MappingProxyType({w.id: w for w in worlds})


def world_ids(ruleset: str = STANDARD_RULESET) -> tuple[str, ...]:
    """Ids of the worlds of one rule set (by default the standard one) in display order."""
    return tuple(load_worlds(ruleset))


def get_world(world_id: str) -> World:
    """The world with ``world_id`` (of any rule set); raises :class:`UnknownWorldError` if
    there is none."""
    try:
        return _all_worlds()[world_id]
    except KeyError:
        raise UnknownWorldError(world_id) from None


def _parse_world(raw: Mapping[str, object], source: str) -> World:
    """Turn one decoded TOML document into a :class:`World`, checking every key."""
    _check_keys(raw, _TOP_KEYS | (_OPTIONAL_TOP_KEYS & raw.keys()), source)
    ruleset = raw.get("ruleset", STANDARD_RULESET)
    if not isinstance(ruleset, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", ruleset):
        raise WorldDataError(f"{source}: ruleset must be a lower-case identifier, got {ruleset!r}")
    world_id = raw["id"]
    if not isinstance(world_id, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", world_id):
        raise WorldDataError(f"{source}: id must be a lower-case identifier, got {world_id!r}")
    order = raw["order"]
    if not isinstance(order, int) or isinstance(order, bool) or order < 1:
        raise WorldDataError(f"{source}: order must be a positive integer, got {order!r}")
    colors_raw = _table(raw, "colors", source)
    _check_keys(colors_raw, frozenset(COLOR_KEYS), f"{source} [colors]")
    colors = {key: _string(colors_raw, key, f"{source} [colors]") for key in COLOR_KEYS}
    for key, value in colors.items():
        if not _HEX_COLOR.fullmatch(value):
            raise WorldDataError(f"{source} [colors]: {key} must be #RRGGBB, got {value!r}")
    keys = (ROLE_KEYS, DECK_KEYS)
    if ruleset != STANDARD_RULESET:
        # Another rule set's own roles and decks, named alike in every language.
        first = _table(raw, LANGUAGES[0], source)
        keys = (
            _own_keys(_table(first, "roles", source), source),
            _own_keys(_table(first, "decks", source), source),
        )
    names = {
        lang: _parse_names(_table(raw, lang, source), lang, source, keys) for lang in LANGUAGES
    }
    return World(
        id=world_id,
        order=order,
        colors=Colors(**colors),
        names=MappingProxyType(names),
        ruleset=ruleset,
    )


def _own_keys(raw: Mapping[str, object], where: str) -> tuple[str, ...]:
    """The role or deck keys a world of another rule set names (lower-case identifiers)."""
    keys = tuple(raw)
    if not keys or not all(re.fullmatch(r"[a-z][a-z0-9_]*", key) for key in keys):
        raise WorldDataError(f"{where}: role and deck keys must be lower-case identifiers")
    return keys


def _parse_names(
    raw: Mapping[str, object],
    lang: Language,
    source: str,
    keys: tuple[tuple[str, ...], tuple[str, ...]] | None = None,
) -> WorldNames:
    """Build the :class:`WorldNames` of one ``[de]`` / ``[en]`` table; ``keys`` are the role
    and deck keys it must name (the standard ones unless given)."""
    role_keys, deck_keys = keys or (ROLE_KEYS, DECK_KEYS)
    where = f"{source} [{lang}]"
    _check_keys(raw, frozenset({*NAME_KEYS, "roles", "decks"}), where)
    fields = {key: _string(raw, key, where) for key in NAME_KEYS}
    roles = _name_table(_table(raw, "roles", where), role_keys, f"{source} [{lang}.roles]")
    decks = _name_table(_table(raw, "decks", where), deck_keys, f"{source} [{lang}.decks]")
    return WorldNames(lang=lang, roles=roles, decks=decks, **fields)


def _name_table(raw: Mapping[str, object], keys: tuple[str, ...], where: str) -> Mapping[str, str]:
    """A read-only key -> name mapping in canonical key order, requiring exactly ``keys``."""
    _check_keys(raw, frozenset(keys), where)
    return MappingProxyType({key: _string(raw, key, where) for key in keys})


def _table(raw: Mapping[str, object], key: str, where: str) -> Mapping[str, object]:
    """The sub-table ``key`` of ``raw``; TOML tables decode to ``dict[str, Any]``."""
    value = raw.get(key)
    if not isinstance(value, dict):
        raise WorldDataError(f"{where}: [{key}] must be a table")
    return value


def _string(raw: Mapping[str, object], key: str, where: str) -> str:
    """A non-blank string value; blank names would render as silence on the telephone."""
    value = raw.get(key)
    if not isinstance(value, str) or not value.strip():
        raise WorldDataError(f"{where}: {key} must be a non-empty string, got {value!r}")
    if value != value.strip():
        raise WorldDataError(f"{where}: {key} has leading or trailing whitespace: {value!r}")
    return value


def _check_keys(raw: Mapping[str, object], expected: frozenset[str], where: str) -> None:
    """Reject missing and unexpected keys alike, so typos cannot hide as "extra" data."""
    missing = expected - raw.keys()
    extra = raw.keys() - expected
    if missing or extra:
        raise WorldDataError(
            f"{where}: missing keys {sorted(missing)}, unexpected keys {sorted(extra)}"
        )
