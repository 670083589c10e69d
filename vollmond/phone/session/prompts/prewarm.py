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


def static_prompts(lang: str) -> list[str]:
    """Every phone prompt without a placeholder of its own (world names are fixed per world)."""
    first = get_world(world_ids()[0])
    out: list[str] = []
    for key, template in sorted(load_catalogue(lang).items()):
        names = template_placeholders(template)
        if not key.startswith("phone.") or names - WORLD_PLACEHOLDERS:
            continue
        worlds = [get_world(w) for w in world_ids()] if names else [first]
        out.extend(text(key, lang, world) for world in worlds)
    return list(dict.fromkeys(out))


async def prewarm(voice: Voice, lang: str = "de") -> int:
    """Render every static prompt of `lang` once (off the event loop); returns how many."""
    prompts = static_prompts(lang)
    await asyncio.to_thread(lambda: [voice.render(p, lang) for p in prompts])
    return len(prompts)
