"""Whether a hand-mixed deck makes a fair game (issue 12), with a reason the founder can act on.

The deal repairs any deck so that a game can be dealt (`decks.fit`: an evil card is added to
an all-village deck, an odd twin becomes a villager). That repair is right for a deck cut to
a smaller table, but for a deck someone mixed by hand it silently plays a different game, and
a deck with an evil majority is accepted and decided at the start. So a founding asks first
(the `ChecksDecks` part of the protocol) and refuses such decks with the returned code.
"""

from __future__ import annotations

from vollmond.engine.standard.options import GameOptions
from vollmond.engine.standard.queries import spec
from vollmond.engine.standard.types import DeckId, Trait


def deck_problem(options: GameOptions) -> str | None:
    """The error code of the first thing wrong with a custom deck, or None (also for the
    prepared decks, which are balanced by design, and for decks the founding's bounds check
    refuses anyway: negative counts, an empty deck)."""
    if options.deck is not DeckId.CUSTOM:
        return None
    if any(count < 0 for _, count in options.custom_roles):
        return None  # the hub's bounds check answers this (custom_deck_invalid)
    listed = [role for role, count in options.custom_roles for _ in range(count)]
    if not listed:
        return None  # custom_deck_empty, also from the hub
    cards = listed[: options.players]  # what the table is dealt; the rest fill up as villagers
    evil = sum(1 for role in cards if spec(role).counts_for_evil_majority)
    if evil == 0:
        return "deck_no_evil"
    if 2 * evil >= options.players:
        return "deck_evil_majority"
    if sum(1 for role in cards if spec(role).has(Trait.BONDED_PAIR)) % 2:
        return "deck_twins_unpaired"
    return None
