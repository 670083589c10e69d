"""Turn engine events and rejections into German or English sentences for one world.

The engine speaks only in codes with parameters (DESIGN §1); the words live in the TOML
catalogues next to this module, one per language, so a translator can fix a sentence without
touching Python and the phone, the browser and the logs all say the same thing.

How a text is made:

* A catalogue entry is a template with named placeholders (``{seat}``, ``{victim}``), or a
  table of variants (``check_result.evil``, ``check_result.default``) when the sentence must
  change with a parameter; the variant is picked here, never by string tricks in the template.
* Every template may use the world's names (:data:`WORLD_PLACEHOLDERS`); each code adds the
  placeholders listed in its spec below (``_EVENTS``, ``_REJECTIONS``). The test suite checks
  every template against :func:`placeholders_for`, so a typo fails in CI, not in a game.
* Placeholders are filled lazily, only when the template asks for them, so an event may carry
  extra parameters (newer engines) without harm.

Rendering never raises for a malformed event: a missing parameter becomes the catalogue's
"unknown" word and a :class:`MissingParamWarning` is issued. Production shows the warning
once; the test suite turns warnings into errors, so a missing parameter fails the tests.
Only an unknown code or language (a programming error) raises.
"""

from __future__ import annotations

import re
import string
import tomllib
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from importlib.resources.abc import Traversable
from types import MappingProxyType
from typing import Final

from vollmond.engine.core import Event, Json, Rejection
from vollmond.engine.ruleset import UnknownRuleSetError, get_ruleset
from vollmond.worlds import (
    ROLE_KEYS,
    Language,
    UnknownLanguageError,
    World,
    is_language,
)

__all__ = [
    "WORLD_PLACEHOLDERS",
    "CatalogueError",
    "MissingMessageError",
    "MissingParamWarning",
    "event_variants",
    "load_catalogue",
    "message_keys",
    "placeholders_for",
    "render_event",
    "render_rejection",
    "render_ruleset_event",
    "render_ruleset_rejection",
    "role_explanation",
    "ruleset_role_help",
    "template_placeholders",
    "text",
]

_CATALOG_PACKAGE: Final = "vollmond.i18n.catalog"
STANDARD: Final = "standard"
"""The rule set whose texts are the catalogue's top level (`event.*`, `reject.*`)."""
_ARTICLES: Final = frozenset({"der", "die", "das", "the"})


class MissingMessageError(LookupError):
    """No template for a key in a language: a code the catalogue does not know yet.

    Raised (not papered over) because it means the catalogue and the engine disagree; the
    tests make sure it cannot happen for any code the engine emits.
    """

    def __init__(self, key: str, lang: str) -> None:
        self.key = key
        self.lang = lang
        super().__init__(f"no message {key!r} in the {lang!r} catalogue")


class CatalogueError(ValueError):
    """A catalogue file is malformed; raised on first load so it fails at start-up."""


class MissingParamWarning(UserWarning):
    """A template needed a value the event lacked (or had in the wrong shape); a fallback
    word was used. A warning, not an error, so a live game keeps talking."""


WORLD_PLACEHOLDERS: Final[frozenset[str]] = frozenset(
    {
        "world",
        "place",
        "evil_singular",
        "evil_plural",
        "evil_plural_dative",
        "evil_group",
        "evil_group_cap",
        "night_room",
        "village",
        "village_lower",
        *(f"role_{key}" for key in ROLE_KEYS),
    }
)
"""Placeholders every template may use: the world's names in the rendering language.
``evil_group_cap`` starts a sentence ("Das Rudel"); ``village_lower`` sits mid-sentence
("Sieg für das Dorf"); ``role_<key>`` is any role's name (``role_filler``)."""

_FMT_PLACEHOLDERS: Final[Mapping[str, frozenset[str]]] = MappingProxyType(
    {
        "fmt.seat": frozenset({"n"}),
        "fmt.numbered": frozenset({"n", "item"}),
        "fmt.seats": frozenset({"list"}),
        "fmt.death": frozenset({"seat", "role"}),
        "fmt.seat_role": frozenset({"seat", "role"}),
        "fmt.role_count": frozenset({"role", "n"}),
        "fmt.votes_one": frozenset({"seat"}),
        "fmt.votes_many": frozenset({"seat", "n"}),
        "fmt.ballot": frozenset({"voter", "target"}),
        "fmt.seconds": frozenset({"n"}),
        "fmt.minutes": frozenset({"n"}),
        "fmt.also_dead": frozenset({"list"}),
        "fmt.lovers_note": frozenset({"lovers"}),
        "victory.lovers": frozenset({"lovers"}),
        "victory.fox": frozenset({"foxes"}),
        # The recording notice (O2/O4): the operator's longest recording, as a duration.
        "moderation.recording.warning": frozenset({"limit"}),
        "moderation.recording.running": frozenset({"limit"}),
    }
)
"""Extra placeholders of the formatting helpers' own templates."""

# What the moderation texts of [moderation.enforce] may use (vollmond/service/enforce.py).
MODERATION_ENFORCE_PLACEHOLDERS: Final[frozenset[str]] = frozenset(
    {"area", "reason", "until", "date", "time", "name", "house"}
)

PHONE_PLACEHOLDERS: Final[frozenset[str]] = frozenset(
    {
        "n",
        "name",
        "id",
        "list",
        "code",
        "letters",
        "size",
        "taken",
        "free",
        "min",
        "max",
        "targets",
        "action",
        "role",
        "seat",
        "reason",
        "phase",
        "round",
        "players",
        "deck",
        "keys",
        "amount",
        "date",
        # the mailbox and friends (X3, X4): where a friend is, "new", a text read aloud
        "where",
        "new",
        "text",
    }
)
"""What the telephone prompts (``phone.*``, filled by vollmond/phone/session through
:func:`text`) may use besides the world's names."""


# --- catalogues --------------------------------------------------------------------------


@cache
def load_catalogue(lang: str) -> Mapping[str, str]:
    """The catalogue of ``lang`` as a read-only map of dotted keys to templates.

    Cached: the files ship with the package and never change while the service runs.
    Tables flatten to dotted keys (``[event.check_result] evil`` -> ``event.check_result.evil``).
    """
    if not is_language(lang):
        raise UnknownLanguageError(lang)
    flat: dict[str, str] = {}
    root = files(_CATALOG_PACKAGE)
    _load_file(root.joinpath(f"{lang}.toml"), f"{_CATALOG_PACKAGE}/{lang}.toml", flat)
    # Each further rule set ships its own texts (``catalog/rulesets/<id>.<lang>.toml``) so that
    # adding one touches no shared file; a key may be defined only once across all files.
    rulesets = root.joinpath("rulesets")
    if rulesets.is_dir():
        for entry in sorted(rulesets.iterdir(), key=lambda e: e.name):
            if entry.name.endswith(f".{lang}.toml"):
                _load_file(entry, f"{_CATALOG_PACKAGE}/rulesets/{entry.name}", flat)
    return MappingProxyType(flat)


def _load_file(entry: Traversable, source: str, flat: dict[str, str]) -> None:
    try:
        raw = tomllib.loads(entry.read_text("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise CatalogueError(f"{source}: invalid TOML: {exc}") from exc
    part: dict[str, str] = {}
    _flatten(raw, "", part, source)
    clash = sorted(set(part) & set(flat))
    if clash:
        raise CatalogueError(f"{source}: keys defined twice: {', '.join(clash[:5])}")
    flat.update(part)


def _flatten(table: Mapping[str, object], prefix: str, out: dict[str, str], source: str) -> None:
    for key, value in table.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict):
            _flatten(value, f"{dotted}.", out, source)
        elif isinstance(value, str) and value.strip():
            out[dotted] = value
        else:
            raise CatalogueError(f"{source}: {dotted} must be a non-empty string or a table")


def message_keys(lang: str) -> frozenset[str]:
    """Every template key of a language (for tests and for translators' tooling)."""
    return frozenset(load_catalogue(lang))


def template_placeholders(template: str) -> frozenset[str]:
    """The placeholder names a template uses. Raises ValueError for broken brace syntax."""
    return frozenset(
        name for _, name, _, _ in string.Formatter().parse(template) if name is not None
    )


# --- formatting context ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Ctx:
    """One rendering: language, world, catalogue and the event's parameters."""

    lang: Language
    world: World
    catalogue: Mapping[str, str]
    params: Mapping[str, Json] = field(default_factory=dict)

    @property
    def unknown(self) -> str:
        return self.catalogue.get("fmt.unknown", "?")

    def msg(self, key: str, **values: str) -> str:
        """A helper template (``fmt.seat``, ``phase.night``) filled with ``values``."""
        template = self.catalogue.get(key)
        if template is None:
            _warn(f"{self.lang}: no message {key!r}")
            return self.unknown
        return _fill(template, _Values(self, key, values, {}))

    def join(self, items: list[str]) -> str:
        """Join as "a, b und c" in the language's way; an empty list means nobody."""
        if not items:
            return self.msg("fmt.nobody")
        if len(items) == 1:
            return items[0]
        # Read raw, not via msg(): the separators' own spaces must survive.
        sep = self.catalogue.get("fmt.list_sep", ", ")
        last = self.catalogue.get("fmt.list_and", sep)
        return sep.join(items[:-1]) + last + items[-1]


def _warn(message: str) -> None:
    warnings.warn(message, MissingParamWarning, stacklevel=3)


def _world_value(ctx: _Ctx, name: str) -> str | None:
    """The world's name for a world placeholder, or None if ``name`` is not one."""
    if name not in WORLD_PLACEHOLDERS:
        return None
    names = ctx.world.names_in(ctx.lang)
    if name.startswith("role_"):
        return names.roles.get(name.removeprefix("role_"), ctx.unknown)
    if name == "evil_group_cap":
        return names.evil_group[:1].upper() + names.evil_group[1:]
    if name == "village_lower":
        first, _, rest = names.village.partition(" ")
        return f"{first.lower()} {rest}" if rest and first.lower() in _ARTICLES else names.village
    value = getattr(names, name)
    assert isinstance(value, str)
    return value


class _Values(dict[str, str]):
    """The mapping ``str.format_map`` reads: computes each placeholder on first use."""

    def __init__(
        self, ctx: _Ctx, key: str, given: Mapping[str, str], fields: Mapping[str, _Field]
    ) -> None:
        super().__init__(given)
        self.ctx = ctx
        self.key = key
        self.fields = fields

    def __missing__(self, name: str) -> str:
        value = _world_value(self.ctx, name)
        if value is None:
            spec = self.fields.get(name)
            if spec is None:
                _warn(f"{self.ctx.lang}: {self.key} uses {{{name}}}, which nothing supplies")
                value = self.ctx.unknown
            else:
                value = spec.render(name, self.ctx)
        self[name] = value
        return value


_SPACES = re.compile(r"[ \t]{2,}")


def _fill(template: str, values: _Values) -> str:
    """Fill ``template``; a broken template is shown raw rather than crashing a game."""
    try:
        filled = template.format_map(values)
    except (ValueError, IndexError, AttributeError, TypeError) as exc:
        _warn(f"{values.ctx.lang}: {values.key}: broken template ({exc})")
        filled = template
    # Optional parts (e.g. "{also_dead}") may be empty: drop the doubled or trailing space.
    return _SPACES.sub(" ", filled).strip()


# --- parameter formatters ----------------------------------------------------------------


class _BadParamError(Exception):
    """A parameter is present but has the wrong shape; rendered as the fallback word."""


Formatter = Callable[[Json, _Ctx], str]


@dataclass(frozen=True, slots=True)
class _Field:
    """How to produce one placeholder: read ``source`` (default: the placeholder's own name)
    from the event and format it; ``whole`` formatters read all parameters themselves."""

    fmt: Formatter
    source: str | None = None
    whole: bool = False

    def render(self, name: str, ctx: _Ctx) -> str:
        value: Json = None
        if not self.whole:
            source = self.source or name
            if source not in ctx.params:
                _warn(f"{ctx.lang}: parameter {source!r} missing for {{{name}}}")
                return ctx.unknown
            value = ctx.params[source]
        try:
            return self.fmt(value, ctx)
        except (_BadParamError, LookupError) as exc:
            _warn(f"{ctx.lang}: cannot render {{{name}}} from {value!r} ({exc})")
            return ctx.unknown


def _int(value: Json) -> int:
    if isinstance(value, bool):
        raise _BadParamError("a flag is not a number")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.isdigit():
        return int(value)
    raise _BadParamError(f"not a whole number: {value!r}")


def _seq(value: Json) -> list[Json]:
    if isinstance(value, list | tuple):
        return list(value)
    raise _BadParamError(f"not a list: {value!r}")


def _map(value: Json) -> Mapping[str, Json]:
    if isinstance(value, Mapping):
        return value
    raise _BadParamError(f"not a mapping: {value!r}")


def _str(value: Json) -> str:
    if isinstance(value, str):
        return value
    raise _BadParamError(f"not a string: {value!r}")


def _seat(value: Json, ctx: _Ctx) -> str:
    """A house number; None (nobody chosen) is the language's "nobody"."""
    if value is None:
        return ctx.msg("fmt.nobody")
    return ctx.msg("fmt.seat", n=str(_int(value)))


def _seats(value: Json, ctx: _Ctx) -> str:
    """ "Hausnummern 3, 5 und 8"; one seat reads like a single house number."""
    numbers = sorted(_int(v) for v in _seq(value))
    if len(numbers) <= 1:
        return ctx.join([_seat(n, ctx) for n in numbers])
    return ctx.msg("fmt.seats", list=ctx.join([str(n) for n in numbers]))


def _role(value: Json, ctx: _Ctx) -> str:
    if value is None:
        return ctx.msg("fmt.nobody")
    return ctx.world.role_name(_str(value), ctx.lang)


def _deaths(value: Json, ctx: _Ctx) -> str:
    """The engine's death list [{seat, role}] as "Hausnummer 5 (Seherin) und ..."."""
    items = []
    for entry in _seq(value):
        death = _map(entry)
        items.append(
            # Indexing, not .get(): an entry without seat or role is malformed, not "nobody".
            ctx.msg(
                "fmt.death",
                seat=_seat(_int(death["seat"]), ctx),
                role=_role(_str(death["role"]), ctx),
            )
        )
    return ctx.join(items)


def _tally(value: Json, ctx: _Ctx) -> str:
    """Votes per target, most first: "Hausnummer 5 mit 3 Stimmen, ..."."""
    counts = sorted(
        ((_int(n), _int(t)) for t, n in _map(value).items()), key=lambda c: (-c[0], c[1])
    )
    if not counts:
        return ctx.msg("fmt.no_votes")
    items = [
        ctx.msg("fmt.votes_one", seat=_seat(t, ctx))
        if n == 1
        else ctx.msg("fmt.votes_many", seat=_seat(t, ctx), n=str(n))
        for n, t in counts
    ]
    return ctx.join(items)


def _ballots(value: Json, ctx: _Ctx) -> str:
    """Who voted for whom (the public record of the evening vote)."""
    pairs = sorted((_int(v), _int(t)) for v, t in _map(value).items())
    if not pairs:
        return ctx.msg("fmt.no_votes")
    return ctx.join(
        [ctx.msg("fmt.ballot", voter=_seat(v, ctx), target=_seat(t, ctx)) for v, t in pairs]
    )


def _count(value: Json, ctx: _Ctx) -> str:
    return str(_int(value))


def _duration(value: Json, ctx: _Ctx) -> str:
    """Seconds as spoken time: "eine Minute und 30 Sekunden"."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _BadParamError(f"not a duration: {value!r}")
    total = max(0, round(value))
    minutes, seconds = divmod(total, 60)
    parts = []
    if minutes:
        parts.append(
            ctx.msg("fmt.minutes_one") if minutes == 1 else ctx.msg("fmt.minutes", n=str(minutes))
        )
    if seconds or not minutes:
        parts.append(
            ctx.msg("fmt.seconds_one") if seconds == 1 else ctx.msg("fmt.seconds", n=str(seconds))
        )
    return ctx.join(parts)


def _plain(value: Json, ctx: _Ctx) -> str:
    """Free text (chat): inserted as a value, so braces in it are never interpreted."""
    return _str(value)


def _deck(value: Json, ctx: _Ctx) -> str:
    return ctx.world.deck_name(_str(value), ctx.lang)


def _composition(value: Json, ctx: _Ctx) -> str:
    """Role counts, most common first: "Dorfbewohner (5), Werwolf (3), Seherin (1)"."""
    counts = sorted(
        ((_int(n), _role(key, ctx)) for key, n in _map(value).items()), key=lambda c: (-c[0], c[1])
    )
    return ctx.join([ctx.msg("fmt.role_count", role=r, n=str(n)) for n, r in counts])


def _role_map(value: Json, ctx: _Ctx) -> str:
    """Every seat's role, by house number (deal record, final reveal)."""
    pairs = sorted((_int(seat), role) for seat, role in _map(value).items())
    return ctx.join(
        [ctx.msg("fmt.seat_role", seat=_seat(s, ctx), role=_role(r, ctx)) for s, r in pairs]
    )


def _numbered_roles(value: Json, ctx: _Ctx) -> str:
    """Cards to pick by number (the thief's): "1 Seher, 2 Dorfbewohner"."""
    return ctx.join(
        [
            ctx.msg("fmt.numbered", n=str(i), item=_role(r, ctx))
            for i, r in enumerate(_seq(value), 1)
        ]
    )


def _catalogue_word(section: str) -> Formatter:
    """A code word looked up in a catalogue section (phase names, rooms, call modes)."""

    def fmt(value: Json, ctx: _Ctx) -> str:
        return ctx.msg(f"{section}.{_str(value)}")

    return fmt


def _role_help(value: Json, ctx: _Ctx) -> str:
    return ctx.msg(f"role_help.{_str(ctx.params.get('role'))}")


def _options(value: Json, ctx: _Ctx) -> str:
    """One sentence per founding option switched on (lovers, unanimous, instant kill)."""
    chosen = [key for key in ("lovers", "unanimous", "instant_kill") if ctx.params.get(key) is True]
    return " ".join(ctx.msg(f"option.{key}") for key in chosen)


def _dead_list(ctx: _Ctx) -> list[Mapping[str, Json]]:
    return [_map(entry) for entry in _seq(ctx.params.get("dead", []))]


def _main_seat(ctx: _Ctx) -> Json:
    """Whose death the event is about: the shot target, the banished, the one who left."""
    for name in ("target", "banished", "seat"):
        if name in ctx.params:
            return ctx.params[name]
    return None


def _target_role(value: Json, ctx: _Ctx) -> str:
    """The revealed role of the event's main seat (shot, instantly killed, left), read from
    the death list, because those events carry the role only there."""
    main = _main_seat(ctx)
    for death in _dead_list(ctx):
        if death.get("seat") == main:
            return _role(death.get("role"), ctx)
    raise _BadParamError(f"seat {main!r} is not in the death list")


def _also_dead(value: Json, ctx: _Ctx) -> str:
    """Those who die along (lovers, twins) beyond the main seat, as a sentence or ""."""
    main = _main_seat(ctx)
    others = [d for d in _dead_list(ctx) if d.get("seat") != main]
    if not others:
        return ""
    return ctx.msg("fmt.also_dead", list=_deaths(list(others), ctx))


def _outcome(value: Json, ctx: _Ctx) -> str:
    """One victory sentence per winning side, in the engine's order."""
    roles = _map(ctx.params.get("roles", {}))
    winners = [_int(w) for w in _seq(ctx.params.get("winners", []))]
    foxes = [w for w in winners if roles.get(str(w)) == "fox"]
    lovers = _seq(ctx.params.get("lovers", []))
    sentences = []
    for side in _seq(ctx.params.get("sides", [])):
        key = f"victory.{_str(side)}"
        if key == "victory.lovers":
            sentences.append(ctx.msg(key, lovers=_seats(lovers, ctx)))
        elif key == "victory.fox":
            sentences.append(ctx.msg(key, foxes=_seats(list(foxes), ctx)))
        else:
            sentences.append(ctx.msg(key))
    return " ".join(sentences)


def _lovers_note(value: Json, ctx: _Ctx) -> str:
    """Who was in love, unless the lovers' victory sentence already said so."""
    lovers = _seq(ctx.params.get("lovers", []))
    if not lovers or "lovers" in _seq(ctx.params.get("sides", [])):
        return ""
    return ctx.msg("fmt.lovers_note", lovers=_seats(lovers, ctx))


SEAT: Final = _Field(_seat)
SEATS: Final = _Field(_seats)
ROLE: Final = _Field(_role)
DEATHS: Final = _Field(_deaths)
TALLY: Final = _Field(_tally)
COUNT: Final = _Field(_count)
DURATION: Final = _Field(_duration)
ROLE_HELP: Final = _Field(_role_help, whole=True)
ALSO_DEAD: Final = _Field(_also_dead, whole=True)
TARGET_ROLE: Final = _Field(_target_role, whole=True)
ACTION: Final = _Field(_catalogue_word("action"), source="kind")


# --- specs: which placeholders each code supplies, and how its variant is chosen -----------


Selector = Callable[[Mapping[str, Json]], str]


@dataclass(frozen=True, slots=True)
class _Spec:
    fields: Mapping[str, _Field] = field(default_factory=dict)
    select: Selector | None = None
    variants: frozenset[str] = frozenset()


def _spec(select: Selector | None = None, variants: Iterable[str] = (), **fields: _Field) -> _Spec:
    return _Spec(MappingProxyType(fields), select, frozenset(variants))


def _by(param: str, *known: str) -> tuple[Selector, tuple[str, ...]]:
    """Variant = the parameter's value (e.g. ``kind="twin"``)."""
    return (lambda p: str(p.get(param))), known


def _if_none(param: str, variant: str) -> Selector:
    return lambda p: variant if p.get(param) is None else "default"


def _if_true(param: str, variant: str) -> Selector:
    return lambda p: variant if p.get(param) is True else "default"


def _one_of(param: str) -> Selector:
    """Variant ``one`` when the list parameter has a single item (German and English verbs
    agree with it: "Zur Wahl steht Hausnummer 4")."""

    def select(p: Mapping[str, Json]) -> str:
        value = p.get(param)
        return "one" if isinstance(value, list) and len(value) == 1 else "default"

    return select


def _team(p: Mapping[str, Json]) -> str:
    members = p.get("members")
    return "alone" if isinstance(members, list) and len(members) == 1 else "default"


def _phase_variant(p: Mapping[str, Json]) -> str:
    phase = str(p.get("phase"))
    return "night_steal" if phase == "night" and p.get("step") == "steal" else phase


def _action_variant(p: Mapping[str, Json]) -> str:
    kind = str(p.get("kind"))
    return f"{kind}_nobody" if "target" in p and p.get("target") is None else kind


def _vote_variant(p: Mapping[str, Json]) -> str:
    if p.get("banished") is not None:
        return "spared" if p.get("spared") is True else "default"
    return "tie" if p.get("tally") else "no_votes"


def _game_over_variant(p: Mapping[str, Json]) -> str:
    sides = p.get("sides")
    return "draw" if isinstance(sides, list) and "draw" in sides else "default"


_ACTIONS: Final = (
    "evil_vote",
    "steal",
    "steal_nobody",
    "check",
    "protect",
    "trap",
    "heal",
    "poison",
    "visit",
    "seance",
    "seance_nobody",
    "shoot",
    "transfer_vote",
    "instant_kill",
)

_EVENTS: Final[Mapping[str, _Spec]] = MappingProxyType(
    {
        "game_started": _spec(
            players=COUNT,
            deck=_Field(_deck),
            composition=_Field(_composition),
            options=_Field(_options, whole=True),
        ),
        "roles_dealt": _spec(
            lambda p: "lovers" if p.get("lovers") else "default",
            ["lovers"],
            roles=_Field(_role_map),
            lovers=SEATS,
        ),
        "role_assigned": _spec(role=ROLE, role_help=ROLE_HELP),
        "team_revealed": _spec(_team, ["alone"], members=SEATS),
        "partner_revealed": _spec(*_by("kind", "twin", "lovers"), seats=SEATS),
        "phase_started": _spec(
            _phase_variant,
            ["night_steal", "night", "morning", "day", "vote"],
            phase=_Field(_catalogue_word("phase")),
            round=COUNT,
            seconds=DURATION,
        ),
        "role_taken": _spec(
            _if_none("source", "nobody"), ["nobody"], role=ROLE, source=SEAT, role_help=ROLE_HELP
        ),
        "role_stolen": _spec(role=ROLE),
        "team_changed": _spec(_team, ["alone"], members=SEATS),
        "action_confirmed": _spec(_action_variant, _ACTIONS, action=ACTION, target=SEAT),
        "evil_vote_cast": _spec(voter=SEAT, target=SEAT, tally=TALLY),
        "evil_votes_complete": _spec(_if_none("victim", "nobody"), ["nobody"], victim=SEAT),
        "witch_victim": _spec(_if_none("victim", "nobody"), ["nobody"], victim=SEAT),
        "check_result": _spec(_if_true("evil", "evil"), ["evil"], target=SEAT),
        "medium_result": _spec(_if_true("evil", "evil"), ["evil"], target=SEAT),
        "morning_report": _spec(
            lambda p: "default" if p.get("dead") else "nobody",
            ["nobody"],
            round=COUNT,
            dead=DEATHS,
        ),
        "shot_fired": _spec(target=SEAT, role=TARGET_ROLE, dead=DEATHS, also_dead=ALSO_DEAD),
        "instant_kill": _spec(target=SEAT, role=TARGET_ROLE, dead=DEATHS, also_dead=ALSO_DEAD),
        "nominated": _spec(by=SEAT, nominee=SEAT),
        "no_nominations": _spec(round=COUNT),
        "voting_started": _spec(_one_of("nominees"), ["one"], nominees=SEATS),
        "vote_cast": _spec(voter=SEAT),
        "vote_transferred": _spec(giver=SEAT, to=SEAT),
        "vote_result": _spec(
            _vote_variant,
            ["spared", "tie", "no_votes"],
            tally=TALLY,
            votes=_Field(_ballots),
            banished=SEAT,
            role=ROLE,
            dead=DEATHS,
            also_dead=ALSO_DEAD,
        ),
        "interjection": _spec(seat=SEAT, seconds=DURATION),
        "floor_released": _spec(seat=SEAT),
        "call_outgoing": _spec(callee=SEAT),
        "call_incoming": _spec(caller=SEAT),
        "call_busy": _spec(callee=SEAT),
        "call_connected": _spec(caller=SEAT, callee=SEAT),
        "call_declined": _spec(callee=SEAT),
        "call_missed": _spec(),
        "call_ended": _spec(*_by("reason", "hung_up", "max_duration", "phase_end", "death")),
        "call_mode_changed": _spec(
            *_by("mode", "stumm", "halb"), seat=SEAT, mode=_Field(_catalogue_word("call_mode"))
        ),
        "seance_opened": _spec(dead=SEAT),
        "chat": _spec(
            *_by("room", "night_room", "call", "out"),
            seat=SEAT,
            text=_Field(_plain),
            room=_Field(_catalogue_word("room")),
        ),
        "player_left": _spec(  # "player_left", by value: the code is new in the engine
            lambda p: "default" if p.get("dead") else "already_dead",
            ["already_dead"],
            seat=SEAT,
            role=TARGET_ROLE,
            dead=DEATHS,
            also_dead=ALSO_DEAD,
        ),
        "game_over": _spec(
            _game_over_variant,
            ["draw"],
            outcome=_Field(_outcome, whole=True),
            winners=SEATS,
            roles=_Field(_role_map),
            lovers_note=_Field(_lovers_note, whole=True),
        ),
    }
)
"""Every event code: its placeholders (beyond the world's) and how a variant is chosen."""

_TARGET: Final = _spec(target=SEAT)
_REJECTIONS: Final[Mapping[str, _Spec]] = MappingProxyType(
    {
        "no_such_ability": _spec(action=ACTION),
        "target_unknown": _TARGET,
        "target_dead": _TARGET,
        "target_alive": _TARGET,
        "target_teammate": _TARGET,
        "repeat_target": _TARGET,
        "not_nominated": _TARGET,
        "already_nominated": _TARGET,
        "target_busy": _TARGET,
        "floor_taken": _spec(seat=SEAT),
        "call_limit": _spec(limit=COUNT),
        "text_too_long": _spec(limit=COUNT),
    }
)
"""Every rejection code and its placeholders; VICTIM_UNKNOWN's ``target`` (0 for "none") is
deliberately not offered: 0 is no house."""


def event_variants(code: str) -> frozenset[str]:
    """The variant names the renderer may pick for ``code`` besides ``default`` (for tests)."""
    spec = _EVENTS.get(code)
    return spec.variants if spec is not None else frozenset()


def placeholders_for(key: str) -> frozenset[str]:
    """Every placeholder the renderer can fill for the template ``key`` (a dotted catalogue
    key, variants included); tests check each template uses only these."""
    section, _, rest = key.partition(".")
    code = rest.partition(".")[0]
    extra: Iterable[str] = _FMT_PLACEHOLDERS.get(key, frozenset())
    ruleset_fields = _ruleset_placeholders(section, rest)
    if ruleset_fields is not None:
        extra = ruleset_fields
    elif section == "event" and code in _EVENTS:
        extra = _EVENTS[code].fields.keys()
    elif section == "reject" and code in _REJECTIONS:
        extra = _REJECTIONS[code].fields.keys()
    elif section == "phone":
        extra = PHONE_PLACEHOLDERS
    elif key.startswith("moderation.enforce."):
        extra = MODERATION_ENFORCE_PLACEHOLDERS
    elif section == "web" and code == "errors":
        extra = WEB_ERROR_PLACEHOLDERS
    elif section == "web" and code == "front":
        extra = frozenset({"number", "address"})
    elif section == "rooms":
        extra = ROOMS_PLACEHOLDERS
    return WORLD_PLACEHOLDERS | frozenset(extra)


#: What the conference rooms' texts name (vollmond/phone/session/conference.py, the web page).
ROOMS_PLACEHOLDERS: Final = frozenset(
    (
        "list",
        "n",
        "name",
        "count",
        "code",
        "letters",
        "size",
        "mode",
        "text",
        "max",
        "reason",
        "limit",
        "digits",
    )
)


#: Numbers the web's error sentences name (vollmond/service/web/error_catalogue.py).
WEB_ERROR_PLACEHOLDERS: Final = frozenset({"min", "max"})


# --- further rule sets (catalog/rulesets/<id>.<lang>.toml) --------------------------------
#
# A rule set other than the standard one keys its texts `<id>.event.<code>[.<variant>]` and
# `<id>.reject.<code>`; its message schema (RuleSet.messages) says which parameters each code
# carries. Parameters are formatted by their name (a seat, a list of seats, a tally, ...), and
# a template variant is the value of a string parameter (`<id>.event.game_over.nazis`).

_BY_NAME: Final[Mapping[str, _Field]] = MappingProxyType(
    {
        **dict.fromkeys(("seat", "by", "voter", "target", "victim", "mayor"), SEAT),
        **dict.fromkeys(
            ("seats", "members", "candidates", "tied", "accused", "winners", "lovers"), SEATS
        ),
        **dict.fromkeys(("round", "players", "nazis", "pairs", "seq", "limit"), COUNT),
        "tally": TALLY,
        "votes": _Field(_ballots),
        "role": ROLE,
        "roles": _Field(_role_map),
        "cards": _Field(_numbered_roles),
        "dead": DEATHS,
        "also_dead": ALSO_DEAD,
        "seconds": DURATION,
        "text": _Field(_plain),
    }
)


def _scalar(value: Json, ctx: _Ctx) -> str:
    """A parameter without a known name: numbers and words as they are, None as nobody, a
    truth value as yes or no (a night's answer: "Werwolf? ja")."""
    if value is None:
        return ctx.msg("fmt.nobody")
    if isinstance(value, bool):
        return ctx.msg("ui.yes" if value else "ui.no")
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return str(value)
    raise _BadParamError(f"no format for {value!r}")


def _ruleset_placeholders(section: str, rest: str) -> frozenset[str] | None:
    """The placeholders of a rule set's own key (None if `section` names no such rule set)."""
    if section == "standard":
        return None
    try:
        schema = get_ruleset(section).messages
    except UnknownRuleSetError:
        return None
    kind, _, tail = rest.partition(".")
    if kind == "phone":  # the rule set's telephone texts (its keypad's offers)
        return PHONE_PLACEHOLDERS | {"numbers"}
    specs = {"event": schema.events, "reject": schema.rejections}.get(kind)
    spec = specs.get(tail.partition(".")[0]) if specs is not None else None
    if spec is None:
        return frozenset()
    return spec.names | ({"also_dead"} if "dead" in spec.names else frozenset())


def _render_ruleset(
    ruleset_id: str, section: str, code: str, params: Mapping[str, Json], lang: str, world: World
) -> str:
    catalogue = load_catalogue(lang)
    assert is_language(lang)
    base = f"{ruleset_id}.{section}.{code}"
    variant = next(
        (
            value
            for name, value in sorted(params.items())
            if name != "text" and isinstance(value, str) and f"{base}.{value}" in catalogue
        ),
        None,
    )
    template = _template(catalogue, lang, base, variant)
    fields = {name: _BY_NAME.get(name, _Field(_scalar)) for name in params}
    if "dead" in params:
        fields["also_dead"] = ALSO_DEAD
    ctx = _Ctx(lang, world, catalogue, params)
    return _fill(template, _Values(ctx, base, {}, fields))


def render_ruleset_event(ruleset_id: str, event: Event, lang: str, world: World) -> str:
    """The sentence for an event of the rule set `ruleset_id` (not the standard one)."""
    return _render_ruleset(ruleset_id, "event", event.code, event.params, lang, world)


def render_ruleset_rejection(ruleset_id: str, rejection: Rejection, lang: str, world: World) -> str:
    """Why a command of the rule set `ruleset_id` was refused, said to its sender."""
    return _render_ruleset(ruleset_id, "reject", rejection.code, rejection.params, lang, world)


# --- public API --------------------------------------------------------------------------


def _template(catalogue: Mapping[str, str], lang: str, base: str, variant: str | None) -> str:
    """The plain template ``base``, else its variant, else its ``default``."""
    for key in (base, f"{base}.{variant}" if variant else None, f"{base}.default"):
        if key is not None and key in catalogue:
            return catalogue[key]
    raise MissingMessageError(base, lang)


def _render(section: str, code: str, params: Mapping[str, Json], lang: str, world: World) -> str:
    catalogue = load_catalogue(lang)
    assert is_language(lang)  # load_catalogue has refused every other language
    specs = _EVENTS if section == "event" else _REJECTIONS
    spec = specs.get(code, _Spec())
    variant = spec.select(params) if spec.select is not None else None
    key = f"{section}.{code}"
    template = _template(catalogue, lang, key, variant)
    ctx = _Ctx(lang, world, catalogue, params)
    return _fill(template, _Values(ctx, key, {}, spec.fields))


def render_event(event: Event, lang: str, world: World, ruleset: str = STANDARD) -> str:
    """The sentence for ``event`` of rule set ``ruleset`` in ``lang``, in ``world``'s names.

    The renderer is chosen by rule-set id: the standard rules have their own table of
    formats above, every other rule set is rendered from its message schema. Events addressed
    to one player say "du"/"you". Raises :class:`MissingMessageError` only for a code the
    catalogue lacks; bad or missing parameters fall back (see module doc).
    """
    if ruleset != STANDARD:
        return render_ruleset_event(ruleset, event, lang, world)
    return _render("event", event.code, event.params, lang, world)


def render_rejection(rejection: Rejection, lang: str, world: World, ruleset: str = STANDARD) -> str:
    """Why a command was refused, said to the player who gave it."""
    if ruleset != STANDARD:
        return render_ruleset_rejection(ruleset, rejection, lang, world)
    return _render("reject", rejection.code, rejection.params, lang, world)


def role_explanation(role_key: str, lang: str, world: World) -> str:
    """One or two sentences on what the role (a generic key, e.g. ``"seer"``) can do."""
    return text(f"role_help.{role_key}", lang, world)


def ruleset_role_help(ruleset_id: str, role_key: str, lang: str, world: World) -> str:
    """What a role of a further rule set can do (``<id>.role_help.<key>`` in its catalogue),
    or "" where its catalogue has no help for that key (the lovers, the captain)."""
    key = f"{ruleset_id}.role_help.{role_key}"
    return text(key, lang, world) if key in load_catalogue(lang) else ""


def text(key: str, lang: str, world: World, **params: Json) -> str:
    """Any catalogue string (``phase.night``, ``side.evil``, ``ui.nobody``) with the world's
    names and ``params`` (inserted as given; a None becomes "nobody")."""
    catalogue = load_catalogue(lang)
    assert is_language(lang)
    template = catalogue.get(key)
    if template is None:
        raise MissingMessageError(key, lang)
    ctx = _Ctx(lang, world, catalogue, params)
    given = {
        name: (ctx.msg("fmt.nobody") if value is None else str(value))
        for name, value in params.items()
    }
    return _fill(template, _Values(ctx, key, given, {}))
