"""Issue 12: every error code the web entry path can send has a sentence in German and English
(``web.errors`` or ``web.*``), and the German one is not the English one. The codes are read
from the sources, so a new refusal without a sentence fails here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from vollmond.service.web.error_catalogue import error_sentences, error_text

ROOT = Path(__file__).resolve().parents[2] / "vollmond" / "service"
SOURCES = [
    *sorted((ROOT / "web").glob("*.py")),
    ROOT / "hub.py",
    ROOT / "founding.py",
]
PATTERNS = [
    r'ApiError\(\s*\d+,\s*"([a-z_]+)"',
    r'_error\(\s*\d+,\s*"([a-z_]+)"',
    r'error_response\(\s*\d+,\s*"([a-z_]+)"',
    r'self\.error\(\s*"([a-z_]+)"',
    r'LobbyError\(\s*"([a-z_]+)"',
    r'return "([a-z_]+)"',
    r'code = "([a-z_]+)"',
]
EXEMPT = {
    "not_staff",  # the console's own socket (moderation: mod_i18n.js)
    # Worded by the server in the client's language with the reason and the expiry a banned or
    # muted person must always see (O5); errors.js shows the server's sentence for these.
    "banned",
    "muted",
}


def sent_codes() -> set[str]:
    codes: set[str] = set()
    for path in SOURCES:
        if path.name.startswith("moderation"):
            continue  # the console has its own catalogue (mod_i18n.js)
        source = path.read_text()
        for pattern in PATTERNS:
            codes.update(re.findall(pattern, source))
    return codes - EXEMPT


def test_the_sources_send_codes() -> None:
    codes = sent_codes()
    assert {"too_few_players", "no_such_game", "not_your_seat", "password_rule"} <= codes


@pytest.mark.parametrize("code", sorted(sent_codes()))
def test_every_sent_code_has_a_german_and_an_english_sentence(code: str) -> None:
    de, en = error_sentences("de"), error_sentences("en")
    assert code in de and code in en, f"no sentence for {code}"
    assert de[code] != en[code]
    assert error_text(code, "de") == de[code] or "{" in de[code]


def test_an_unknown_code_gets_the_unknown_sentence() -> None:
    assert error_text("no_such_code_at_all", "de") == error_sentences("de")["unknown"]
