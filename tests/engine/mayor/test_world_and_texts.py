"""B8: the world of seed 000 (a village in the Thuringian forest, Nazis disguised as citizens,
democratic citizens, prison) and its German and English texts for every code."""

from __future__ import annotations

import re
import tomllib
from importlib.resources import files
from typing import Any

import pytest

from vollmond.engine.core import Audience, Event, Rejection
from vollmond.engine.mayor.codes import Ev, Rej
from vollmond.engine.mayor.messages import SCHEMA, VARIANTS
from vollmond.engine.mayor.options import MayorOptions
from vollmond.engine.mayor.replay import replay
from vollmond.engine.mayor.roles.registry import ROLES
from vollmond.engine.mayor.sim import play_game
from vollmond.i18n.render import (
    load_catalogue,
    render_ruleset_event,
    render_ruleset_rejection,
)
from vollmond.worlds import LANGUAGES, WorldDataError, get_world, world_ids
from vollmond.worlds.loader import _parse_world

WORLD = "thueringer_wald"


@pytest.mark.rule("B8")
def test_the_world_is_a_village_in_the_thuringian_forest_with_nazis_and_democrats() -> None:
    world = get_world(WORLD)
    assert world.ruleset == "mayor"
    de, en = world.names_in("de"), world.names_in("en")
    assert de.world == "Thüringer Wald" and en.world == "Thuringian Forest"
    assert de.evil_plural == "Nazis" and de.village == "Die demokratischen Bürger*innen"
    assert "getarnt" in de.evil_group and "disguised" in en.evil_group
    for lang in LANGUAGES:
        for role in (*ROLES, "lovers"):
            assert world.role_name(role, lang).strip()
    assert WORLD in world_ids("mayor") and WORLD not in world_ids()  # not a standard world


def test_a_world_of_another_rule_set_names_the_same_roles_in_every_language() -> None:
    raw: dict[str, Any] = tomllib.loads(
        (files("vollmond.worlds.data") / f"{WORLD}.toml").read_text("utf-8")
    )
    assert _parse_world(raw, "ok.toml") == get_world(WORLD)
    del raw["en"]["roles"]["lovers"]
    with pytest.raises(WorldDataError):
        _parse_world(raw, "broken.toml")


def _keys(lang: str) -> frozenset[str]:
    return frozenset(k for k in load_catalogue(lang) if k.startswith("mayor."))


@pytest.mark.rule("B8")
@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_code_has_a_text_in_both_languages(lang: str) -> None:
    keys = _keys(lang)
    for code in Ev:
        values = VARIANTS.get(code.value)
        if code is Ev.ROLE_ASSIGNED:
            values = tuple(ROLES)
        if values:
            assert {f"mayor.event.{code.value}.{v}" for v in values} <= keys, code
        else:
            assert f"mayor.event.{code.value}" in keys, code
    for rej in Rej:
        assert f"mayor.reject.{rej.value}" in keys, rej
    assert _keys("de") == _keys("en")


_SHARED = r"heil|reich|führer|fuehrer|88|18|14"
FORBIDDEN = {
    "de": re.compile(
        rf"\b({_SHARED}|sieg\w*|endsieg|kamerad\w*|volksgemeinschaft|hakenkreuz|vaterland|"
        r"glorreich\w*|held|helden\w*|heldin\w*|stolz\w*)\b",
        re.IGNORECASE,
    ),
    "en": re.compile(
        rf"\b({_SHARED}|victory|swastika|fatherland|comrade\w*|glorious|hero\w*|proud\w*)\b",
        re.IGNORECASE,
    ),
}
"""Words of Nazi slogans, symbols and heroic framing that the mayor texts never use."""


@pytest.mark.rule("B8")
@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_texts_give_the_evil_side_no_slogans_symbols_or_heroics(lang: str) -> None:
    texts = [v for k, v in load_catalogue(lang).items() if k.startswith("mayor.")]
    names = get_world(WORLD).names_in(lang)
    texts += [names.tagline, names.evil_group, names.night_room]
    hits = sorted({m.group(0) for t in texts for m in FORBIDDEN[lang].finditer(t)})
    assert hits == []


def _assert_clean(text: str, what: object) -> None:
    assert text.strip(), what
    assert "None" not in text and "{" not in text and "}" not in text, (what, text)
    assert "unbekannt" not in text and "unknown" not in text, (what, text)


@pytest.mark.rule("B8")
@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("players", [5, 9])
def test_every_event_of_bot_games_renders_cleanly(lang: str, players: int) -> None:
    world = get_world(WORLD)
    seen: set[str] = set()
    prison_words = {"de": "Justizvollzugsanstalt", "en": "prison"}[lang]
    for seed in range(6):
        game = play_game(MayorOptions(players=players), seed)
        for event in replay(game.options, seed, game.commands).events:
            text = render_ruleset_event("mayor", event, lang, world)
            _assert_clean(text, event)
            seen.add(event.code)
            if event.code == Ev.IMPRISONED:
                assert prison_words in text
    assert {Ev.MAYOR_ELECTED, Ev.NIGHT_VICTIM, Ev.GAME_OVER, Ev.TRIAL_OPENED} <= seen


@pytest.mark.parametrize("lang", LANGUAGES)
def test_rejections_and_chat_render_cleanly(lang: str) -> None:
    world = get_world(WORLD)
    for rej in Rej:
        samples = {"target": 3, "limit": 500}
        params = {name: samples[name] for name in SCHEMA.rejections[rej.value].required}
        _assert_clean(render_ruleset_rejection("mayor", Rejection(rej, params), lang, world), rej)
    for room in ("market", "night_room", "out"):
        event = Event(Ev.CHAT, _public(), {"room": room, "seat": 2, "text": "{nazi} market"})
        text = render_ruleset_event("mayor", event, lang, world)
        assert text.endswith("{nazi} market")  # the player's words, verbatim


def _public() -> Audience:
    return Audience.public()


def test_german_sentences_read_naturally() -> None:
    world = get_world(WORLD)
    event = Event(
        Ev.IMPRISONED,
        _public(),
        {
            "seat": 4,
            "role": "nazi",
            "how": "mayor",
            "dead": [{"seat": 4, "role": "nazi"}, {"seat": 2, "role": "citizen"}],
            "tally": {"4": 2, "5": 2},
            "votes": {},
        },
    )
    assert render_ruleset_event("mayor", event, "de", world) == (
        "Auch die Stichwahl endet gleich (Hausnummer 4 mit 2 Stimmen und Hausnummer 5 mit "
        "2 Stimmen). Die doppelte Stimme der Bürgermeister*in entscheidet: Hausnummer 4 kommt "
        "in die Justizvollzugsanstalt. Die Karte wird umgedreht: Nazi. Mit in den Tod gehen: "
        "Hausnummer 2 (Demokratische Bürger*in)."
    )
