"""The further rule sets' texts read well once their parameters are filled in.

A parameter named like a house (`seat`, `voter`, `target`, ...) is rendered with its word
already ("Hausnummer 3", "House 3"), so a template that puts the word before it again shows
"Hausnummer Hausnummer 3" in the browser's log and on the phone.
"""

from __future__ import annotations

import re

import pytest

from vollmond.engine.core import Audience, Event
from vollmond.i18n.render import _BY_NAME, SEAT, SEATS, load_catalogue, render_ruleset_event
from vollmond.worlds import LANGUAGES, get_world

HOUSE_NAMES = sorted(name for name, field in _BY_NAME.items() if field in (SEAT, SEATS))
HOUSE_WORDS = ("hausnummer", "hausnummern", "house", "houses")
FURTHER = ("classic", "mayor")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_house_word_before_a_house_parameter(lang: str) -> None:
    doubled = re.compile(
        rf"\b({'|'.join(HOUSE_WORDS)})\s+\{{({'|'.join(HOUSE_NAMES)})\}}", re.IGNORECASE
    )
    bad = [
        key
        for key, template in load_catalogue(lang).items()
        if key.split(".")[0] in FURTHER and doubled.search(template)
    ]
    assert not bad, f"{lang}: the house word twice in {bad}"


def test_a_classic_vote_names_each_house_once() -> None:
    event = Event("vote_cast", Audience.public(), {"voter": 3, "target": 4})
    world = get_world("duesterwald")
    assert render_ruleset_event("classic", event, "de", world) == (
        "Hausnummer 3 hebt die Hand gegen Hausnummer 4."
    )
    assert render_ruleset_event("classic", event, "en", world) == (
        "House 3 raises a hand against House 4."
    )
