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
            # one text, or variants by a parameter's value with a default
            assert key in catalogue or f"{key}.default" in catalogue, f"{lang}: {key} missing"
            for name in (k for k in catalogue if k == key or k.startswith(key + ".")):
                used = template_placeholders(catalogue[name])
                assert used <= spec.names | WORLD_PLACEHOLDERS, (name, used - spec.names)


def test_no_stray_classic_keys() -> None:
    """Event and rejection texts belong to a code of the schema (a variant's key names its
    code first); the telephone's texts (`classic.phone.*`) are the keypad's."""
    expected = {f"classic.{s}.{c}" for s, specs in SECTIONS for c in specs}
    for lang in LANGUAGES:
        keys = {
            k
            for k in load_catalogue(lang)
            if k.startswith("classic.") and not k.startswith("classic.phone.")
        }
        # The browser's role help: one text per card (`ruleset_role_help`).
        role_help = {f"classic.role_help.{role.value}" for role in Role}
        codes = {k if k in expected | role_help else k.rpartition(".")[0] for k in keys}
        assert codes == expected | role_help
