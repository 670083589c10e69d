"""The classic rules by telephone: which key entries give which legal command (the
`HasKeypad` duty of `vollmond.engine.ruleset`). The phone knows only entries (a house, nobody,
yes, no, done); this module knows the commands. Texts are in the rule set's catalogue under
``classic.phone.can.<offer>`` and ``classic.phone.do.<offer>``; docs/phone-keys.md lists them.

Amor's two lovers are two houses typed one after the other; the thief's cards are 1 and 2;
the herb witch passes with ``0#``; the day's vote is ``NN#``, and ``0#`` keeps the hand down.
"""

from __future__ import annotations

from collections.abc import Sequence

from vollmond.engine.classic.commands import (
    Act,
    BreakTie,
    Command,
    Elect,
    NameSuccessor,
    Vote,
)
from vollmond.engine.classic.legal import legal_actions
from vollmond.engine.classic.state import GameState
from vollmond.engine.classic.types import Kind, Phase
from vollmond.engine.ruleset import Key, KeyAction, Press


def _house(n: int | None) -> Press:
    return Press(Key.HOUSE, n) if n is not None else Press(Key.NOBODY)


def key_action(cmd: Command) -> KeyAction | None:
    """The entries and the offer of one player's command (None: not given by keys)."""
    if isinstance(cmd, Act):
        if cmd.kind is Kind.LINK:
            return KeyAction(cmd, (_house(cmd.target), _house(cmd.second)), cmd.kind.value)
        return KeyAction(cmd, (_house(cmd.target),), cmd.kind.value)
    if isinstance(cmd, Elect):
        return KeyAction(cmd, (_house(cmd.target),), "elect")
    if isinstance(cmd, Vote):
        return KeyAction(cmd, (_house(cmd.target),), "abstain" if cmd.target is None else "vote")
    if isinstance(cmd, BreakTie):
        return KeyAction(cmd, (_house(cmd.target),), "break_tie")
    if isinstance(cmd, NameSuccessor):
        return KeyAction(cmd, (_house(cmd.target),), "successor")
    return None


def keypad(state: GameState, seat: int) -> list[KeyAction]:
    return [a for a in map(key_action, legal_actions(state, seat)) if a is not None]


def key_probe(state: GameState, seat: int, presses: Sequence[Press]) -> Command | None:
    """The command a house entry means in this phase, for the rules to refuse with a reason."""
    if not presses or presses[0].key is not Key.HOUSE or not state.has_seat(seat):
        return None
    target = presses[0].number
    assert target is not None
    phase = state.phase
    if phase is Phase.ELECTION:
        return Elect(seat, target)
    if phase is Phase.DAY:
        return Vote(seat, target)
    if phase is Phase.TIEBREAK:
        return BreakTie(seat, target)
    if phase is Phase.SUCCESSION:
        return NameSuccessor(seat, target)
    if phase is Phase.NIGHT:
        abilities = state.player(seat).spec.abilities
        now = [a for a in abilities if a.step is state.step and a.needs_target]
        usable = now or [a for a in abilities if a.needs_target]
        if not usable:
            return None
        ability = usable[0]
        second = presses[1].number if len(presses) > 1 else None
        return Act(seat, ability.kind, target, second)
    return None
