"""The mayor rules by telephone: which key entries give which legal command (the `HasKeypad`
duty of `vollmond.engine.ruleset`). Texts are in the rule set's catalogue under
``mayor.phone.can.<offer>`` and ``mayor.phone.do.<offer>``; docs/phone-keys.md lists them.

Running for mayor is ``1`` (yes) or ``2`` (no); a ballot, an accusation and the night's
victim are ``NN#``; ``*#`` ends one's own introduction or defence early. There is no ``0#``
in a vote: the vote is compulsory (B3). Chat is the browser's; by phone one talks.
"""

from __future__ import annotations

from collections.abc import Sequence

from vollmond.engine.mayor.commands import (
    Accuse,
    ChooseVictim,
    Command,
    Stand,
    Vote,
    YieldFloor,
)
from vollmond.engine.mayor.legal import legal_commands
from vollmond.engine.mayor.state import MayorState
from vollmond.engine.mayor.types import Stage
from vollmond.engine.ruleset import Key, KeyAction, Press


def key_action(cmd: Command) -> KeyAction | None:
    """The entries and the offer of one player's command (None: not given by keys)."""
    if isinstance(cmd, Stand):
        return KeyAction(cmd, (Press(Key.YES if cmd.stand else Key.NO),), "stand")
    if isinstance(cmd, Vote):
        return KeyAction(cmd, (Press(Key.HOUSE, cmd.target),), "vote")
    if isinstance(cmd, Accuse):
        return KeyAction(cmd, (Press(Key.HOUSE, cmd.target),), "accuse")
    if isinstance(cmd, ChooseVictim):
        return KeyAction(cmd, (Press(Key.HOUSE, cmd.target),), "victim")
    if isinstance(cmd, YieldFloor):
        return KeyAction(cmd, (Press(Key.DONE),), "yield")
    return None


def keypad(state: MayorState, seat: int) -> list[KeyAction]:
    return [a for a in map(key_action, legal_commands(state, seat)) if a is not None]


def key_probe(state: MayorState, seat: int, presses: Sequence[Press]) -> Command | None:
    """The command an entry means in this stage, for the rules to refuse with a reason."""
    if not presses or not state.has_seat(seat):
        return None
    press, stage = presses[0], state.stage
    if press.key in (Key.YES, Key.NO):
        return Stand(seat, stand=press.key is Key.YES)
    if press.key is Key.DONE:
        return YieldFloor(seat)
    if press.key is not Key.HOUSE or press.number is None:
        return None
    if stage in (Stage.BALLOT, Stage.RUNOFF, Stage.VOTE, Stage.REVOTE):
        return Vote(seat, press.number)
    if stage is Stage.ACCUSATIONS:
        return Accuse(seat, press.number)
    if stage is Stage.NIGHT:
        return ChooseVictim(seat, press.number)
    return None
