"""Render the fixed prompts before the first caller needs them.

A prompt rendered for the first time costs a speech-program run (tens of milliseconds for
espeak-ng, more for bigger voices); the menus a caller hears first are always the same words,
so rendering them at start-up keeps key-to-prompt latency at a cache hit.
"""

from __future__ import annotations

import asyncio

from vollmond.i18n import WORLD_PLACEHOLDERS, text
from vollmond.i18n.render import load_catalogue, template_placeholders
from vollmond.phone.session.prompts.voice import Voice
from vollmond.worlds import get_world, world_ids

#: The catalogue tables a caller hears: the menus and games, and the conference rooms' (X2).
PHONE_PREFIXES = ("phone.", "rooms.phone.")


def static_prompt_codes(lang: str) -> dict[str, str]:
    """Every phone prompt without a placeholder of its own, by its code: the message key, or
    ``key@world`` when the words differ per world (world names are fixed per world). The text
    is what the session speaks (a sentence starts with a capital)."""
    first = get_world(world_ids()[0])
    out: dict[str, str] = {}
    for key, template in sorted(load_catalogue(lang).items()):
        names = template_placeholders(template)
        if not key.startswith(PHONE_PREFIXES) or names - WORLD_PLACEHOLDERS:
            continue
        if not names:
            out[key] = sentence(text(key, lang, first))
            continue
        for world_id in world_ids():
            out[f"{key}@{world_id}"] = sentence(text(key, lang, get_world(world_id)))
    return out


def static_prompts(lang: str) -> list[str]:
    """The texts of :func:`static_prompt_codes`, each once."""
    return list(dict.fromkeys(static_prompt_codes(lang).values()))


def sentence(line: str) -> str:
    """A prompt is a sentence: it starts with a capital ("Prüfen: Hausnummer und Raute", where
    the catalogue's action word "prüfen" opens the line)."""
    line = line.strip()
    return line[:1].upper() + line[1:]


async def prewarm(voice: Voice, lang: str = "de") -> int:
    """Render every static prompt of `lang` once (off the event loop); returns how many."""
    prompts = static_prompts(lang)
    await asyncio.to_thread(lambda: [voice.render(p, lang) for p in prompts])
    return len(prompts)
