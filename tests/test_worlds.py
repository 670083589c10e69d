"""Tests for the themed worlds: the data files, the loader and the seed's German names."""

from __future__ import annotations

import dataclasses
import json
import re
import tomllib
from importlib.resources import files
from pathlib import Path
from typing import Any, cast

import pytest

from vollmond.worlds import (
    DECK_KEYS,
    LANGUAGES,
    NAME_KEYS,
    ROLE_KEYS,
    UnknownDeckError,
    UnknownLanguageError,
    UnknownRoleError,
    UnknownWorldError,
    World,
    WorldDataError,
    get_world,
    is_language,
    load_worlds,
    world_ids,
)
from vollmond.worlds.loader import _parse_world

_SHARED = Path(__file__).resolve().parents[2] / "shared"
REFERENCE_JSON = _SHARED / "reference/worlds-from-seed-004.json"
SEED_TEXT = _SHARED / "seeds/004_c0cc232a4264ef22.txt"

EXPECTED_IDS = (
    "werwolf",
    "vampir",
    "mafia",
    "ostberlin",
    "neo_kowloon",
    "kepler7",
    "blackwood",
    "hexenjagd",
    "schwarze_moewe",
    "bunker13",
)

# German singulars are not in the seed's name list; they are derived by hand, so pin them.
EXPECTED_GERMAN_SINGULAR = {
    "werwolf": "Werwolf",
    "vampir": "Vampir",
    "mafia": "Mafioso",
    "ostberlin": "Doppelagent",
    "neo_kowloon": "Konzern-Killer",
    "kepler7": "Alien",
    "blackwood": "Mörder",
    "hexenjagd": "Hexe",
    "schwarze_moewe": "Meuterer",
    "bunker13": "Infizierter",
}

# Reference JSON key -> our name field, for the fields that are not roles or decks.
REFERENCE_NAME_FIELDS = {
    "world": "world",
    "place": "place",
    "evil_plural": "evil_plural",
    "evil_group": "evil_group",
    "night_room": "night_room",
    "village_wins": "village",
}
# Roles the seed names directly; "evil" and "lovers" are derived, "twin" is "twins" there.
REFERENCE_ROLE_KEYS = {key: key for key in ROLE_KEYS if key not in ("evil", "lovers", "twin")}
REFERENCE_ROLE_KEYS["twin"] = "twins"


def _reference_worlds() -> list[dict[str, Any]]:
    """The seed's per-world names; skipped only when the shared reference is not checked out."""
    if not REFERENCE_JSON.is_file():
        pytest.skip(f"reference file {REFERENCE_JSON} is absent")
    data = json.loads(REFERENCE_JSON.read_text(encoding="utf-8"))
    return cast(list[dict[str, Any]], data["worlds"])


@pytest.mark.rule("W1")
def test_there_are_exactly_ten_distinct_worlds() -> None:
    worlds = load_worlds()
    assert tuple(worlds) == EXPECTED_IDS
    assert world_ids() == EXPECTED_IDS
    assert [w.order for w in worlds.values()] == list(range(1, 11))
    for lang in LANGUAGES:
        assert len({w.names_in(lang).world for w in worlds.values()}) == 10
        assert len({w.names_in(lang).place for w in worlds.values()}) == 10
        assert len({w.names_in(lang).evil_plural for w in worlds.values()}) == 10
        assert len({w.names_in(lang).tagline for w in worlds.values()}) == 10


@pytest.mark.parametrize("world_id", EXPECTED_IDS)
def test_every_world_loads(world_id: str) -> None:
    world = get_world(world_id)
    assert isinstance(world, World)
    assert world.id == world_id
    assert set(world.names) == set(LANGUAGES)
    for lang in LANGUAGES:
        assert world.names_in(lang).lang == lang


OTHER_RULESET_WORLDS = {"duesterwald": "classic", "thueringer_wald": "mayor"}
"""Worlds of further rule sets (issue 14): not among the standard rule set's ten."""


def test_package_data_ships_one_toml_per_world() -> None:
    names = {e.name for e in files("vollmond.worlds.data").iterdir() if e.name.endswith(".toml")}
    assert names == {f"{world_id}.toml" for world_id in (*EXPECTED_IDS, *OTHER_RULESET_WORLDS)}
    for world_id, ruleset in OTHER_RULESET_WORLDS.items():
        assert get_world(world_id).ruleset == ruleset
        assert world_id in world_ids(ruleset) and world_id not in world_ids()


@pytest.mark.parametrize("world_id", EXPECTED_IDS)
@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_key_is_present_and_non_empty(world_id: str, lang: str) -> None:
    world = get_world(world_id)
    names = world.names_in(lang)
    for key in NAME_KEYS:
        value = getattr(names, key)
        assert isinstance(value, str)
        assert value.strip(), f"{world_id}/{lang}: {key} is empty"
    assert tuple(names.roles) == ROLE_KEYS
    assert tuple(names.decks) == DECK_KEYS
    for role_key in ROLE_KEYS:
        assert world.role_name(role_key, lang).strip()
    for deck_key in DECK_KEYS:
        assert world.deck_name(deck_key, lang).strip()


@pytest.mark.parametrize("world_id", EXPECTED_IDS)
@pytest.mark.parametrize("lang", LANGUAGES)
def test_names_within_a_world_are_unambiguous(world_id: str, lang: str) -> None:
    # Players pick roles and decks by name on the phone, so two keys must never sound alike.
    names = get_world(world_id).names_in(lang)
    assert len(set(names.roles.values())) == len(ROLE_KEYS)
    assert len(set(names.decks.values())) == len(DECK_KEYS)


def test_german_names_equal_the_reference() -> None:
    reference = _reference_worlds()
    worlds = list(load_worlds().values())
    assert len(reference) == len(worlds)
    for ref, world in zip(reference, worlds, strict=True):
        de = world.names_in("de")
        for ref_key, field in REFERENCE_NAME_FIELDS.items():
            assert getattr(de, field) == ref[ref_key], f"{world.id}: {field}"
        for role_key, ref_key in REFERENCE_ROLE_KEYS.items():
            assert world.role_name(role_key, "de") == ref[ref_key], f"{world.id}: {role_key}"
        assert [world.deck_name(key, "de") for key in DECK_KEYS] == ref["decks"], world.id


@pytest.mark.parametrize("world_id", EXPECTED_IDS)
def test_derived_german_names(world_id: str) -> None:
    world = get_world(world_id)
    de = world.names_in("de")
    assert de.evil_singular == EXPECTED_GERMAN_SINGULAR[world_id]
    assert world.role_name("evil", "de") == de.evil_singular
    assert world.role_name("lovers", "de") == "Verliebte"
    en = world.names_in("en")
    assert world.role_name("evil", "en") == en.evil_singular
    assert en.evil_plural_dative == en.evil_plural


def test_german_dative_plural_matches_seed_text() -> None:
    if not SEED_TEXT.is_file():
        pytest.skip(f"seed file {SEED_TEXT} is absent")
    seed = SEED_TEXT.read_text(encoding="utf-8")
    found = re.findall(r"Etwa eine Person von vier gehört zu den (.+?) \(ab 8", seed)
    assert found == [w.names_in("de").evil_plural_dative for w in load_worlds().values()]


def test_english_is_a_translation_not_a_copy() -> None:
    for world in load_worlds().values():
        de, en = world.names_in("de"), world.names_in("en")
        assert de.tagline != en.tagline
        differing = sum(de.roles[key] != en.roles[key] for key in ROLE_KEYS)
        assert differing >= len(ROLE_KEYS) // 2, world.id


def test_colors_are_hex_and_give_each_world_its_own_identity() -> None:
    worlds = load_worlds().values()
    for world in worlds:
        for value in dataclasses.astuple(world.colors):
            assert re.fullmatch(r"#[0-9A-Fa-f]{6}", value), world.id
    assert len({w.colors for w in worlds}) == 10
    assert len({w.colors.primary.upper() for w in worlds}) == 10


def test_unknown_world_raises() -> None:
    with pytest.raises(UnknownWorldError) as excinfo:
        get_world("atlantis")
    assert excinfo.value.world_id == "atlantis"
    assert "atlantis" in str(excinfo.value)
    assert isinstance(excinfo.value, LookupError)


def test_unknown_role_deck_and_language_raise() -> None:
    world = get_world("werwolf")
    with pytest.raises(UnknownRoleError):
        world.role_name("dragon")
    with pytest.raises(UnknownDeckError):
        world.deck_name("poker")
    with pytest.raises(UnknownLanguageError):
        world.role_name("seer", "fr")
    assert world.role_name("seer") == "Seherin"
    assert world.deck_name("starter", "en") == "Village Fair"
    assert is_language("en")
    assert not is_language("fr")


def test_worlds_are_cached_and_immutable() -> None:
    assert load_worlds() is load_worlds()
    world = get_world("mafia")
    with pytest.raises(dataclasses.FrozenInstanceError):
        world.id = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        cast(dict[str, str], world.names_in("de").roles)["seer"] = "x"
    with pytest.raises(TypeError):
        cast(dict[str, World], load_worlds())["mafia"] = world


def _valid_raw() -> dict[str, Any]:
    """A decoded copy of a real world file, to be broken in targeted ways."""
    text = (files("vollmond.worlds.data") / "werwolf.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


def test_valid_raw_data_parses() -> None:
    assert _parse_world(_valid_raw(), "werwolf.toml") == get_world("werwolf")


@pytest.mark.parametrize(
    "breakage",
    [
        "missing_role",
        "extra_key",
        "empty_name",
        "bad_color",
        "bad_order",
        "missing_language",
    ],
)
def test_malformed_data_is_rejected(breakage: str) -> None:
    raw = _valid_raw()
    if breakage == "missing_role":
        del raw["en"]["roles"]["fox"]
    elif breakage == "extra_key":
        raw["de"]["decks"]["poker"] = "Pokerrunde"
    elif breakage == "empty_name":
        raw["de"]["place"] = "  "
    elif breakage == "bad_color":
        raw["colors"]["accent"] = "red"
    elif breakage == "bad_order":
        raw["order"] = 0
    elif breakage == "missing_language":
        del raw["en"]
    with pytest.raises(WorldDataError):
        _parse_world(raw, "broken.toml")
