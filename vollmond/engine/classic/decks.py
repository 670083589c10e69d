"""Putting the cards in the hat (seed 003, "Zusammenstellen eines Sets").

A2: one villager is always replaced by the seer. The mightier cards come in only at larger
tables (the seed marks the herb witch and the sandman "for larger rounds"). With a thief two
extra villager cards are shuffled in, so the hat holds two cards more than the table (A3).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from vollmond.engine.classic.options import MAX_PLAYERS, MIN_PLAYERS
from vollmond.engine.classic.roles.registry import ROLES
from vollmond.engine.classic.types import DeckId, Role


class InvalidOptionsError(ValueError):
    """Founding options that cannot make a game (size out of range, an impossible deck)."""


def wolf_count(players: int) -> int:
    """About one werewolf card in four players: 5-6 → 1, 7-10 → 2, 11-14 → 3, ..."""
    return max(1, (players + 1) // 4)


_CLASSIC_FROM: tuple[tuple[int, Role], ...] = (
    (6, Role.AMOR),
    (7, Role.THIEF),
    (9, Role.HERB_WITCH),
    (11, Role.SANDMAN),
)
_FULL_FROM: tuple[tuple[int, Role], ...] = (
    (8, Role.DEATH_SEEKER),
    (8, Role.FALSE_WOLF),
    (10, Role.PACT_MAKER),
)
_WOLF_VARIANTS: tuple[tuple[int, Role], ...] = ((9, Role.SEEING_WOLF), (12, Role.BLACK_WOLF))
"""Special werewolves replace plain werewolf cards from these sizes (A11, A13)."""


def _table_deck(deck: DeckId, players: int) -> list[Role]:
    wolves = [Role.WEREWOLF] * wolf_count(players)
    specials: list[Role] = [Role.SEER]
    if deck in (DeckId.CLASSIC, DeckId.FULL):
        specials += [role for size, role in _CLASSIC_FROM if players >= size]
    if deck is DeckId.FULL:
        specials += [role for size, role in _FULL_FROM if players >= size]
        variants = [role for size, role in _WOLF_VARIANTS if players >= size]
        for i, role in enumerate(variants[: len(wolves)]):
            wolves[i] = role
    cards = wolves + specials
    return cards + [Role.VILLAGER] * (players - len(cards))


def _custom_deck(players: int, custom: Sequence[tuple[Role, int]]) -> list[Role]:
    counts = Counter[Role]()
    for role, n in custom:
        if n < 0:
            raise InvalidOptionsError("a card count cannot be negative")
        counts[role] += n
    if counts.total() != players:
        raise InvalidOptionsError(f"a custom deck needs exactly {players} cards")
    if counts[Role.SEER] == 0:
        if counts[Role.VILLAGER] == 0:
            raise InvalidOptionsError("A2: one villager card must become the seer")
        counts[Role.VILLAGER] -= 1
        counts[Role.SEER] += 1
    if counts[Role.THIEF] > 1:
        raise InvalidOptionsError("one thief at most")
    return sorted(counts.elements())


def build_deck(deck: DeckId, players: int, custom: Sequence[tuple[Role, int]]) -> list[Role]:
    """The cards in the hat: one per player, two more villagers with a thief (A3)."""
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise InvalidOptionsError(f"players must be {MIN_PLAYERS}..{MAX_PLAYERS}")
    cards = _custom_deck(players, custom) if deck is DeckId.CUSTOM else _table_deck(deck, players)
    if not any(ROLES[c].wolf for c in cards):
        raise InvalidOptionsError("a deck needs a werewolf card")
    if Role.THIEF in cards:
        cards += [Role.VILLAGER, Role.VILLAGER]
    return cards
