"""Every code of the classic rule set has a German and an English text, and each text uses
only the code's own parameters and the world's names (a typo fails here, not in a game)."""

from __future__ import annotations

import pytest

from vollmond.engine.classic.messages import SCHEMA
from vollmond.engine.classic.types import Role
from vollmond.i18n.render import WORLD_PLACEHOLDERS, load_catalogue, template_placeholders
from vollmond.worlds import LANGUAGES

SECTIONS = (("event", SCHEMA.events), ("reject", SCHEMA.rejections))


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_code_has_a_text_with_known_placeholders(lang: str) -> None:
    catalogue = load_catalogue(lang)
    for section, specs in SECTIONS:
        for code, spec in specs.items():
            key = f"classic.{section}.{code}"
            assert key in catalogue, f"{lang}: {key} missing"
            used = template_placeholders(catalogue[key])
            assert used <= spec.names | WORLD_PLACEHOLDERS, (key, used - spec.names)


def test_no_stray_classic_keys() -> None:
    for lang in LANGUAGES:
        keys = {k for k in load_catalogue(lang) if k.startswith("classic.")}
        expected = {f"classic.{s}.{c}" for s, specs in SECTIONS for c in specs}
        # The browser's role help: one text per card (`ruleset_role_help`).
        expected |= {f"classic.role_help.{role.value}" for role in Role}
        assert keys == expected
