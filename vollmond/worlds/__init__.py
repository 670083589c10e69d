"""The ten themed worlds (Werwolf, Vampir, Mafia, ...) as data with a small typed loader.

The engine speaks only in generic keys; this package turns them into each world's German
or English names. See :mod:`vollmond.worlds.loader` for the details.
"""

from vollmond.worlds.loader import (
    COLOR_KEYS,
    DECK_KEYS,
    LANGUAGES,
    NAME_KEYS,
    ROLE_KEYS,
    Colors,
    Language,
    UnknownDeckError,
    UnknownLanguageError,
    UnknownRoleError,
    UnknownWorldError,
    World,
    WorldDataError,
    WorldLookupError,
    WorldNames,
    get_world,
    is_language,
    load_worlds,
    world_ids,
)

__all__ = [
    "COLOR_KEYS",
    "DECK_KEYS",
    "LANGUAGES",
    "NAME_KEYS",
    "ROLE_KEYS",
    "Colors",
    "Language",
    "UnknownDeckError",
    "UnknownLanguageError",
    "UnknownRoleError",
    "UnknownWorldError",
    "World",
    "WorldDataError",
    "WorldLookupError",
    "WorldNames",
    "get_world",
    "is_language",
    "load_worlds",
    "world_ids",
]
