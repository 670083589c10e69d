"""The message catalogues: complete for every code, consistent with the renderer, and able to
say every event of real games in every world and language without a hole or a crash.

Warnings are errors in this suite (pyproject), so any MissingParamWarning the renderer issues
for a missing or malformed parameter fails the test that caused it.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from functools import cache
from pathlib import Path

import pytest

from vollmond.engine.core import Audience, Event, Json, Rejection
from vollmond.engine.standard.codes import Ev, Rej
from vollmond.engine.standard.options import CallSettings, GameOptions
from vollmond.engine.standard.replay import replay
from vollmond.engine.standard.sim import play_game
from vollmond.engine.standard.types import DeckId, RoleId
from vollmond.i18n import (
    MissingMessageError,
    MissingParamWarning,
    render_event,
    render_rejection,
    role_explanation,
    text,
)
from vollmond.i18n.render import (
    event_variants,
    load_catalogue,
    message_keys,
    placeholders_for,
    template_placeholders,
)
from vollmond.worlds import LANGUAGES, ROLE_KEYS, UnknownLanguageError, World, get_world, world_ids

_DEATHS: list[Json] = [{"seat": 5, "role": "seer"}, {"seat": 7, "role": "filler"}]

SAMPLE_EVENTS: Mapping[str, Mapping[str, Json]] = {
    Ev.GAME_STARTED: {
        "world": "werwolf",
        "players": 8,
        "deck": "starter",
        "composition": {"evil": 2, "seer": 1, "filler": 5},
        "lovers": True,
        "unanimous": True,
        "instant_kill": True,
    },
    Ev.ROLES_DEALT: {"roles": {"1": "evil", "2": "seer"}, "lovers": [1, 2]},
    Ev.ROLE_ASSIGNED: {"role": "seer"},
    Ev.TEAM_REVEALED: {"members": [2, 6]},
    Ev.PARTNER_REVEALED: {"kind": "twin", "seats": [3, 4]},
    Ev.PHASE_STARTED: {"phase": "night", "round": 1, "seq": 1, "seconds": 120.0, "step": "main"},
    Ev.ROLE_TAKEN: {"role": "seer", "source": 4},
    Ev.ROLE_STOLEN: {"role": "filler"},
    Ev.TEAM_CHANGED: {"members": [2, 6, 9]},
    Ev.ACTION_CONFIRMED: {"kind": "protect", "target": 3},
    Ev.EVIL_VOTE_CAST: {"voter": 2, "target": 5, "tally": {"5": 1}},
    Ev.EVIL_VOTES_COMPLETE: {"victim": 5},
    Ev.WITCH_VICTIM: {"victim": 5},
    Ev.CHECK_RESULT: {"target": 2, "evil": True},
    Ev.MEDIUM_RESULT: {"target": 2, "evil": False},
    Ev.MORNING_REPORT: {"round": 2, "dead": _DEATHS},
    Ev.SHOT_FIRED: {"target": 5, "dead": _DEATHS},
    Ev.INSTANT_KILL: {"target": 5, "dead": _DEATHS},
    Ev.NOMINATED: {"by": 1, "nominee": 2},
    Ev.NO_NOMINATIONS: {"round": 2},
    Ev.VOTING_STARTED: {"nominees": [2, 4]},
    Ev.VOTE_CAST: {"voter": 3},
    Ev.VOTE_TRANSFERRED: {"giver": 3, "to": 4},
    Ev.VOTE_RESULT: {
        "tally": {"5": 3, "4": 1},
        "votes": {"1": 5, "2": 5, "3": 5, "6": 4},
        "banished": 5,
        "role": "seer",
        "spared": False,
        "dead": _DEATHS,
    },
    Ev.INTERJECTION: {"seat": 3, "seconds": 20.0},
    Ev.FLOOR_RELEASED: {"seat": 3},
    Ev.CALL_OUTGOING: {"call": 1, "callee": 4},
    Ev.CALL_INCOMING: {"call": 1, "caller": 3},
    Ev.CALL_BUSY: {"callee": 4},
    Ev.CALL_CONNECTED: {"call": 1, "caller": 3, "callee": 4},
    Ev.CALL_DECLINED: {"call": 1, "callee": 4},
    Ev.CALL_MISSED: {"call": 1},
    Ev.CALL_ENDED: {"call": 1, "reason": "max_duration", "kind": "call"},
    Ev.CALL_MODE_CHANGED: {"call": 1, "seat": 3, "mode": "halb"},
    Ev.SEANCE_OPENED: {"call": 2, "dead": 6},
    Ev.CHAT: {"room": "night_room", "seat": 2, "text": "Nehmt Hausnummer 5 {heute}!"},
    "player_left": {"seat": 5, "dead": _DEATHS},
    Ev.GAME_OVER: {
        "sides": ["village", "lovers", "fox"],
        "winners": [1, 3, 4, 8],
        "roles": {"1": "seer", "2": "evil", "3": "filler", "4": "filler", "8": "fox"},
        "lovers": [3, 4],
    },
}
"""One complete parameter set per event code, shaped like the engine's (see where each code
is emitted); covers codes bots never produce (chat, call modes)."""

VARIANT_SAMPLES: list[tuple[str, dict[str, Json]]] = [
    (Ev.ROLES_DEALT, {"roles": {"1": "evil"}, "lovers": []}),
    (Ev.TEAM_REVEALED, {"members": [2]}),
    (Ev.TEAM_CHANGED, {"members": [9]}),
    (Ev.PARTNER_REVEALED, {"kind": "lovers", "seats": [3, 8]}),
    (Ev.PHASE_STARTED, {"phase": "night", "round": 1, "seconds": 30.0, "step": "steal"}),
    (Ev.PHASE_STARTED, {"phase": "morning", "round": 1, "seconds": 20.0}),
    (Ev.PHASE_STARTED, {"phase": "day", "round": 1, "seconds": 180.0}),
    (Ev.PHASE_STARTED, {"phase": "vote", "round": 1, "seconds": 90.0}),
    (Ev.ROLE_TAKEN, {"role": "filler", "source": None}),
    (Ev.ACTION_CONFIRMED, {"kind": "steal", "target": None}),
    (Ev.ACTION_CONFIRMED, {"kind": "seance", "target": None}),
    (Ev.EVIL_VOTES_COMPLETE, {"victim": None}),
    (Ev.WITCH_VICTIM, {"victim": None}),
    (Ev.CHECK_RESULT, {"target": 2, "evil": False}),
    (Ev.MEDIUM_RESULT, {"target": 2, "evil": True}),
    (Ev.MORNING_REPORT, {"round": 3, "dead": []}),
    (Ev.SHOT_FIRED, {"target": 5, "dead": [{"seat": 5, "role": "evil"}]}),
    (
        Ev.VOTE_RESULT,
        {"tally": {"8": 2}, "votes": {}, "banished": 8, "role": "princess", "spared": True},
    ),
    (Ev.VOTE_RESULT, {"tally": {"1": 1, "2": 1}, "banished": None, "role": None, "dead": []}),
    (Ev.VOTE_RESULT, {"tally": {}, "votes": {}, "banished": None, "role": None, "dead": []}),
    (Ev.CALL_ENDED, {"call": 1, "reason": "death", "kind": "seance"}),
    (Ev.CALL_MODE_CHANGED, {"call": 1, "seat": 3, "mode": "stumm"}),
    (Ev.CHAT, {"room": "market", "seat": 2, "text": "Guten Morgen"}),
    (Ev.CHAT, {"room": "call", "seat": 2, "text": "Psst"}),
    ("player_left", {"seat": 5, "dead": []}),
    (Ev.GAME_OVER, {"sides": ["draw"], "winners": [], "roles": {"1": "evil"}, "lovers": []}),
    (Ev.GAME_OVER, {"sides": ["lovers"], "winners": [3, 4], "roles": {}, "lovers": [3, 4]}),
    (Ev.GAME_OVER, {"sides": ["evil"], "winners": [2], "roles": {"2": "evil"}, "lovers": []}),
]
"""Parameter sets that pick the other variants of a code."""

SAMPLE_REJECTIONS: Mapping[str, Mapping[str, Json]] = {
    **{code.value: {} for code in Rej},
    Rej.NO_SUCH_ABILITY: {"kind": "poison"},
    Rej.TARGET_UNKNOWN: {"target": 17},
    Rej.TARGET_DEAD: {"target": 3},
    Rej.TARGET_ALIVE: {"target": 3},
    Rej.TARGET_TEAMMATE: {"target": 3},
    Rej.REPEAT_TARGET: {"target": 3},
    Rej.VICTIM_UNKNOWN: {"target": 0},
    Rej.NOT_NOMINATED: {"target": 3},
    Rej.ALREADY_NOMINATED: {"target": 3},
    Rej.TARGET_BUSY: {"target": 3},
    Rej.FLOOR_TAKEN: {"seat": 4},
    Rej.CALL_LIMIT: {"limit": 3},
    Rej.TEXT_TOO_LONG: {"limit": 500},
}

_FALLBACKS = ("unbekannt", "unknown")
_WORLDS = world_ids()


def _event(code: str, params: Mapping[str, Json]) -> Event:
    return Event(code, Audience.public(), params)


def _assert_clean(rendered: str, what: str) -> None:
    """No placeholder left over, no Python None, nothing empty."""
    assert rendered.strip(), what
    assert "None" not in rendered, (what, rendered)
    assert "{" not in rendered and "}" not in rendered, (what, rendered)


def _has_template(lang: str, base: str) -> bool:
    keys = message_keys(lang)
    return base in keys or f"{base}.default" in keys


# --- completeness ------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("code", list(Ev))
def test_every_event_code_has_a_template(code: Ev, lang: str) -> None:
    assert _has_template(lang, f"event.{code.value}")
    for variant in event_variants(code.value):
        assert f"event.{code.value}.{variant}" in message_keys(lang), variant


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("code", list(Rej))
def test_every_rejection_code_has_a_template(code: Rej, lang: str) -> None:
    assert f"reject.{code.value}" in message_keys(lang)


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("role_key", ROLE_KEYS)
def test_every_role_has_an_explanation(role_key: str, lang: str) -> None:
    for world_id in _WORLDS:
        explanation = role_explanation(role_key, lang, get_world(world_id))
        _assert_clean(explanation, f"{world_id} {role_key}")


def test_both_languages_have_the_same_keys() -> None:
    assert message_keys("de") == message_keys("en")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_placeholder_is_one_the_renderer_supplies(lang: str) -> None:
    wrong = {}
    for key, template in load_catalogue(lang).items():
        unknown = template_placeholders(template) - placeholders_for(key)
        if unknown:
            wrong[key] = sorted(unknown)
    assert wrong == {}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_placeholders_are_plain_names(lang: str) -> None:
    """No attribute/index access or format specs: the renderer fills names only."""
    for key, template in load_catalogue(lang).items():
        for name in template_placeholders(template):
            assert name.isidentifier(), (key, name)
        assert "{!" not in template and ":}" not in template, key


def test_samples_cover_every_code() -> None:
    assert set(Ev) <= set(SAMPLE_EVENTS)
    assert set(Rej) <= set(SAMPLE_REJECTIONS)


# --- rendering samples -------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("world_id", _WORLDS)
def test_samples_render_cleanly(world_id: str, lang: str) -> None:
    world = get_world(world_id)
    samples = [*SAMPLE_EVENTS.items(), *VARIANT_SAMPLES]
    for code, params in samples:
        rendered = render_event(_event(code, params), lang, world)
        if code != Ev.CHAT:
            _assert_clean(rendered, code)
        assert not any(word in rendered for word in _FALLBACKS), (code, rendered)
    for code, params in SAMPLE_REJECTIONS.items():
        rendered = render_rejection(Rejection(code, params), lang, world)
        _assert_clean(rendered, code)
        assert not any(word in rendered for word in _FALLBACKS), (code, rendered)


def test_lists_deaths_and_tallies_read_naturally() -> None:
    werwolf = get_world("werwolf")
    report = render_event(
        _event(Ev.MORNING_REPORT, SAMPLE_EVENTS[Ev.MORNING_REPORT]), "de", werwolf
    )
    assert "Hausnummer 5 (Seherin) und Hausnummer 7 (Dorfbewohner)" in report
    nobody = render_event(_event(Ev.MORNING_REPORT, {"round": 2, "dead": []}), "en", werwolf)
    assert "nobody died" in nobody
    result = render_event(_event(Ev.VOTE_RESULT, SAMPLE_EVENTS[Ev.VOTE_RESULT]), "en", werwolf)
    assert "House 5 with 3 votes and House 4 with one vote" in result
    assert "Taken along in death: House 7 (Villager)." in result
    started = render_event(_event(Ev.PHASE_STARTED, SAMPLE_EVENTS[Ev.PHASE_STARTED]), "de", werwolf)
    assert "2 Minuten" in started


def test_game_over_names_every_winning_side() -> None:
    werwolf = get_world("werwolf")
    rendered = render_event(_event(Ev.GAME_OVER, SAMPLE_EVENTS[Ev.GAME_OVER]), "de", werwolf)
    assert "Sieg für das Dorf!" in rendered
    assert "Liebespaar: Hausnummern 3 und 4" in rendered
    assert "Sieg für Hausnummer 8 (Fuchs)" in rendered


def test_chat_text_is_shown_verbatim_even_with_braces() -> None:
    rendered = render_event(_event(Ev.CHAT, SAMPLE_EVENTS[Ev.CHAT]), "de", get_world("werwolf"))
    assert rendered == "[Wolfsraum] Hausnummer 2: Nehmt Hausnummer 5 {heute}!"


def test_extra_params_are_ignored() -> None:
    werwolf = get_world("werwolf")
    plain = render_event(_event(Ev.NOMINATED, {"by": 1, "nominee": 2}), "de", werwolf)
    extra = render_event(
        _event(Ev.NOMINATED, {"by": 1, "nominee": 2, "reason": "x", "weight": [1]}), "de", werwolf
    )
    assert plain == extra == "Hausnummer 1 schlägt Hausnummer 2 zur Verbannung vor."


def test_missing_param_renders_a_fallback_and_warns() -> None:
    werwolf = get_world("werwolf")
    with pytest.warns(MissingParamWarning, match="nominee"):
        rendered = render_event(_event(Ev.NOMINATED, {"by": 1}), "de", werwolf)
    assert rendered == "Hausnummer 1 schlägt unbekannt zur Verbannung vor."
    with pytest.warns(MissingParamWarning):
        rendered = render_event(_event(Ev.MORNING_REPORT, {"dead": [{"x": 1}]}), "en", werwolf)
    assert "unknown" in rendered


def test_malformed_param_renders_a_fallback_and_warns() -> None:
    with pytest.warns(MissingParamWarning):
        rendered = render_event(
            _event(Ev.ROLE_ASSIGNED, {"role": "no_such_role"}), "en", get_world("werwolf")
        )
    assert rendered.startswith("Your role in this game: unknown.")


def test_unknown_codes_keys_and_languages_raise() -> None:
    werwolf = get_world("werwolf")
    with pytest.raises(MissingMessageError):
        render_event(_event("no_such_event", {}), "de", werwolf)
    with pytest.raises(MissingMessageError):
        render_rejection(Rejection("no_such_rejection"), "en", werwolf)
    with pytest.raises(MissingMessageError):
        text("ui.no_such_string", "de", werwolf)
    with pytest.raises(MissingMessageError):
        role_explanation("no_such_role", "de", werwolf)
    with pytest.raises(UnknownLanguageError):
        render_event(_event(Ev.VOTE_CAST, {"voter": 1}), "fr", werwolf)


def test_ui_strings_use_world_names() -> None:
    vampir = get_world("vampir")
    assert text("phase.night", "de", vampir) == "Nacht"
    assert text("side.evil", "de", vampir) == "Der Blutclan"
    assert text("side.village", "en", vampir) == "The Castle Town"
    assert text("side.fox", "de", vampir) == "Fledermaus"
    assert text("victory.village", "de", get_world("werwolf")) == "Sieg für das Dorf!"


def test_catalogue_is_loaded_once() -> None:
    assert load_catalogue("de") is load_catalogue("de")


# --- whole games, every world ------------------------------------------------------------

_TWELVE_ROLES: tuple[tuple[RoleId, int], ...] = (
    (RoleId.EVIL, 2),
    (RoleId.DEFECTOR, 1),
    (RoleId.VAGABOND, 1),
    (RoleId.MEDIUM, 1),
    (RoleId.NECROMANCER, 1),
    (RoleId.TWIN, 2),
    (RoleId.PRINCESS, 1),
    (RoleId.CREEPER, 1),
    (RoleId.TRAPPER, 1),
    (RoleId.VOTE_GIVER, 1),
)

GAMES: list[tuple[GameOptions, int]] = [
    (GameOptions(players=12, deck=DeckId.AUTO, lovers=True, instant_kill=True), 3),
    (GameOptions(players=12, deck=DeckId.FULL_MOON, unanimous=True), 5),
    (
        GameOptions(
            players=12,
            deck=DeckId.CUSTOM,
            custom_roles=_TWELVE_ROLES,
            lovers=True,
            calls=CallSettings(by_day=True),
        ),
        1,
    ),
]


@cache
def _game_events(index: int) -> tuple[Event, ...]:
    """The events of one bot game, replayed from its command log (as the store would)."""
    options, seed = GAMES[index]
    played = play_game(options, seed)
    return replay(options, seed, played.commands).events


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("index", range(len(GAMES)))
def test_bot_games_render_in_every_world(index: int, lang: str) -> None:
    events = _game_events(index)
    assert any(e.code == Ev.GAME_OVER for e in events)
    for world_id in _WORLDS:
        world = get_world(world_id)
        with warnings.catch_warnings():
            warnings.simplefilter("error", MissingParamWarning)
            for event in events:
                rendered = render_event(event, lang, world)
                _assert_clean(rendered, f"{world_id} {event.code}")
                assert not any(word in rendered for word in _FALLBACKS), rendered


def _role_event(role: str) -> Event:
    return Event(Ev.ROLE_ASSIGNED, Audience.to(1), {"role": role})


@pytest.mark.rule("W1")
@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("world_id", _WORLDS)
def test_each_world_speaks_in_its_own_names(world_id: str, lang: str) -> None:
    """One rule set, ten worlds: the same event carries each world's role, faction and room
    names."""
    world: World = get_world(world_id)
    names = world.names_in(lang)
    for role in RoleId:
        rendered = render_event(_role_event(role.value), lang, world)
        assert world.role_name(role.value, lang) in rendered
    team = render_event(_event(Ev.TEAM_REVEALED, {"members": [2, 6]}), lang, world)
    assert names.night_room in team
    check = render_event(_event(Ev.CHECK_RESULT, {"target": 2, "evil": True}), lang, world)
    assert names.evil_plural_dative in check
    over = render_event(_event(Ev.GAME_OVER, SAMPLE_EVENTS[Ev.GAME_OVER]), lang, world)
    assert names.village.split(" ", 1)[-1] in over
    assert world.role_name("fox", lang) in over


@pytest.mark.rule("W1")
def test_seer_is_named_per_world() -> None:
    seer = _role_event("seer")
    assert "Seherin" in render_event(seer, "de", get_world("werwolf"))
    assert "Wahrsagerin" in render_event(seer, "de", get_world("vampir"))
    assert "Fortune Teller" in render_event(seer, "en", get_world("vampir"))
    assert "Detektivin" in render_event(seer, "de", get_world("mafia"))


def test_a_rule_set_catalogue_cannot_redefine_a_key(tmp_path: Path) -> None:
    """Rule-set catalogues add keys; one that redefines a shared key fails at load."""
    from vollmond.i18n.render import CatalogueError, _load_file  # noqa: PLC0415 - private

    first = tmp_path / "de.toml"
    first.write_text('[fmt]\nseat = "Hausnummer {n}"\n')
    second = tmp_path / "classic.de.toml"
    second.write_text('[fmt]\nseat = "Haus {n}"\n')
    flat: dict[str, str] = {}
    _load_file(first, "de.toml", flat)
    with pytest.raises(CatalogueError, match=r"classic\.de\.toml: keys defined twice: fmt\.seat"):
        _load_file(second, "classic.de.toml", flat)
    assert flat == {"fmt.seat": "Hausnummer {n}"}
