"""Error codes in words: the ``web.errors`` catalogue table, rendered for the browser.

The server answers every refusal with a stable code (HTTP ``{"error": code}``, WebSocket
``{"type": "error", "code": ...}``). The page shows the sentence for that code in its own
language, so a German page never shows an English server message or a raw code (issue 12).
Rule refusals of the engine (``reject.*``) already arrive rendered in the socket's language and
are not repeated here.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

from vollmond.i18n import text
from vollmond.i18n.render import load_catalogue
from vollmond.store.accounts import NAME_MAX_LENGTH, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH
from vollmond.worlds import World, get_world

PREFIX = "web.errors."
DEFAULT_WORLD = "werwolf"
#: Numbers some sentences name; fixed by the code, so they are filled in here once.
PARAMS: Mapping[str, Mapping[str, int]] = {
    "invalid_name": {"max": NAME_MAX_LENGTH},
    "guest_name": {"max": NAME_MAX_LENGTH},
    "password_rule": {"min": PASSWORD_MIN_LENGTH, "max": PASSWORD_MAX_LENGTH},
}


#: Refusals of the web's limits already have their sentences in ``web.*`` (limits.web_text).
LIMIT_PREFIX = "web."


def error_codes() -> frozenset[str]:
    """Every code the catalogue has a sentence for."""
    return frozenset(k[len(PREFIX) :] for k in load_catalogue("en") if k.startswith(PREFIX))


def limit_codes() -> frozenset[str]:
    """The codes of ``web.*`` (too_many_connections, chat_rate_limited, ...)."""
    keys = load_catalogue("en")
    return frozenset(
        k[len(LIMIT_PREFIX) :]
        for k in keys
        if k.startswith(LIMIT_PREFIX) and "." not in k[len(LIMIT_PREFIX) :]
    )


@cache
def error_sentences(lang: str) -> Mapping[str, str]:
    """Code → sentence in `lang`."""
    world = get_world(DEFAULT_WORLD)
    out: dict[str, str] = {
        code: text(LIMIT_PREFIX + code, lang, world) for code in sorted(limit_codes())
    }
    for code in sorted(error_codes()):
        out[code] = text(PREFIX + code, lang, world, **PARAMS.get(code, {}))
    return out


def error_text(code: str, lang: str, world: World | None = None) -> str:
    """The sentence for one code (the `unknown` sentence for a code without one)."""
    w = world or get_world(DEFAULT_WORLD)
    if code in limit_codes():
        return text(LIMIT_PREFIX + code, lang, w)
    key = code if code in error_codes() else "unknown"
    return text(PREFIX + key, lang, w, **PARAMS.get(key, {}))
