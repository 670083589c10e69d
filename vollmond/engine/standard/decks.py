"""Role decks (W4), the automatic deal (W5) and fitting a deck to the table (W8).

Decks list their cards most important first, so cutting from the back drops the least
essential cards; fillers are always last.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from vollmond.engine.standard.queries import spec
from vollmond.engine.standard.types import DeckId, RoleId

R = RoleId


@dataclass(frozen=True, slots=True)
class Deck:
    id: DeckId
    cards: tuple[RoleId, ...]
    lovers: bool = False

    @property
    def size(self) -> int:
        return len(self.cards)


FIXED_DECKS: Mapping[DeckId, Deck] = MappingProxyType(
    {
        # "Sieben Leute, ruhiger Einstieg: ein Geschwisterpaar, eine Stimme zum Verschenken,
        # ein Beschützer, eine Hellseherin und zwei Böse."
        DeckId.STARTER: Deck(
            DeckId.STARTER, (R.EVIL, R.EVIL, R.SEER, R.KNIGHT, R.TWIN, R.TWIN, R.VOTE_GIVER)
        ),
        # "Sieben Leute und ein Einzelgänger" — seven plus the fox.
        DeckId.LONER: Deck(
            DeckId.LONER,
            (R.EVIL, R.EVIL, R.SEER, R.FOX, R.DOCTOR, R.HUNTER, R.FILLER, R.FILLER),
        ),
        # "Neun Leute, eine geladene Waffe und ein Draht zum Jenseits."
        DeckId.FULL_MOON: Deck(
            DeckId.FULL_MOON,
            (R.EVIL, R.EVIL, R.SEER, R.HUNTER, R.NECROMANCER, R.DOCTOR) + (R.FILLER,) * 3,
        ),
        # "Neun Leute, zwei davon heimlich verliebt – und irgendwo schnappt eine Falle zu."
        DeckId.MAY_DANCE: Deck(
            DeckId.MAY_DANCE,
            (R.EVIL, R.EVIL, R.SEER, R.TRAPPER, R.DOCTOR) + (R.FILLER,) * 4,
            lovers=True,
        ),
        # "Zehn Leute, Tränke im Spiel und ein Überläufer, den niemand durchschaut."
        DeckId.CAULDRON: Deck(
            DeckId.CAULDRON,
            (R.EVIL, R.EVIL, R.SEER, R.WITCH, R.DEFECTOR, R.DOCTOR) + (R.FILLER,) * 4,
        ),
        # "Dreizehn Leute: neun Ehrliche mit vielen Fähigkeiten gegen vier auf der dunklen Seite."
        DeckId.TRIBUNAL: Deck(
            DeckId.TRIBUNAL,
            (
                *(R.EVIL, R.EVIL, R.SEER, R.EVIL, R.DOCTOR, R.WITCH, R.HUNTER, R.EVIL),
                *(R.KNIGHT, R.MEDIUM, R.TRAPPER, R.PRINCESS, R.VOTE_GIVER),
            ),
        ),
    }
)


def auto_cards(players: int) -> tuple[RoleId, ...]:
    """W5: about one in four evil (at least two from 8), specials by table size."""
    evil = max(1, players // 4)
    if players >= 8:
        evil = max(evil, 2)
    cards: list[RoleId] = [R.EVIL] * evil
    thresholds = (
        (4, R.SEER),
        (5, R.DOCTOR),
        (6, R.WITCH),
        (7, R.HUNTER),
        (8, R.NIGHT_OWL),
        (16, R.SEER),
        (20, R.DOCTOR),
    )
    cards += [role for needed, role in thresholds if players >= needed]
    cards += [R.FILLER] * (players - len(cards))
    return tuple(cards[:players])


def fit(cards: tuple[RoleId, ...], players: int) -> tuple[RoleId, ...]:
    """W8: fill with the filler role or cut from the back; keep one evil; twins in pairs."""
    fitted = list(cards[:players])
    fitted += [R.FILLER] * (players - len(fitted))
    if len(cards) > players:
        _cap_evil(fitted, max_evil_after_cut(players))
    if not any(spec(c).counts_for_evil_majority for c in fitted):
        fitted[_last_replaceable(fitted)] = R.EVIL
    # After the evil card: a deck of only twins gives one up to evil and must pair up again.
    if sum(1 for c in fitted if c is R.TWIN) % 2:
        fitted[max(i for i, c in enumerate(fitted) if c is R.TWIN)] = R.FILLER
    return tuple(fitted)


def max_evil_after_cut(players: int) -> int:
    """A cut deck keeps the evil team well short of a majority (see docs/decisions.md)."""
    return max(1, (players - 1) // 3)


def _cap_evil(cards: list[RoleId], limit: int) -> None:
    evil = [i for i, c in enumerate(cards) if spec(c).counts_for_evil_majority]
    for i in evil[limit:]:
        cards[i] = R.FILLER


def _last_replaceable(cards: list[RoleId]) -> int:
    for i in range(len(cards) - 1, -1, -1):
        if cards[i] is not R.TWIN:
            return i
    return len(cards) - 1


def deal_cards(
    deck: DeckId, players: int, custom: tuple[tuple[RoleId, int], ...] = ()
) -> tuple[tuple[RoleId, ...], bool]:
    """The cards for a table of `players` and whether the lovers add-on comes with the deck."""
    if deck is DeckId.AUTO:
        return auto_cards(players), False
    if deck is DeckId.CUSTOM:
        listed = tuple(role for role, count in custom for _ in range(max(0, count)))
        return fit(listed, players), False
    fixed = FIXED_DECKS[deck]
    return fit(fixed.cards, players), fixed.lovers
