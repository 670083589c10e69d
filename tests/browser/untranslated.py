"""Untranslated text on a German page: an English sentence of the error catalogue, or a raw
error code (issue 12). Codes with an underscore are distinctive; plain words are not checked.
"""

from __future__ import annotations

from playwright.sync_api import Page

from vollmond.service.web.error_catalogue import error_codes, error_sentences, limit_codes

ENGLISH = error_sentences("en")
GERMAN = error_sentences("de")
RAW_CODES = sorted(c for c in error_codes() | limit_codes() | set(ENGLISH) if "_" in c)
# Server messages of the English source that used to reach the page.
ENGLISH_MESSAGES = (
    "password needs at least",
    "this game is not running",
    "please sign in",
    "you can only act for your own seat",
)


def untranslated(page: Page) -> list[str]:
    """What on the page is English or a raw code (empty when all is German)."""
    body = page.locator("body").inner_text()
    found = [c for c in RAW_CODES if c in body]
    found += [s for code, s in ENGLISH.items() if s in body and s != GERMAN[code]]
    found += [m for m in ENGLISH_MESSAGES if m.lower() in body.lower()]
    return found
