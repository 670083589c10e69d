"""The standard rules by telephone: which key entries give which legal command (the
`HasKeypad` part of `vollmond.engine.ruleset`, with the call keys of `HasCalls`). The phone
knows only entries; this module knows the commands. docs/phone-keys.md is the contract.

Offers: a role's ability is ``night.<kind>`` (``NN#``, ``0#`` for nobody) or ``day.<kind>``
(``*NN#``: shoot, pass the vote, the instant kill); the call line speaks it with the world's
name of the action (``action.<kind>``). The rest are ``nominate`` and ``vote`` (``NN#``),
``abstain`` (``0#``), ``answer`` (``1``/``2`` while it rings), ``hang_up``, ``toggle``,
``call`` and ``interject`` (``*#``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from vollmond.engine.ruleset import Key, KeyAction, Press
from vollmond.engine.standard.commands import (
    AnswerCall,
    Command,
    HangUp,
    Interject,
    Nominate,
    PlaceCall,
    ToggleCallMode,
    UseAbility,
    Vote,
)
from vollmond.engine.standard.legal import legal_actions
from vollmond.engine.standard.properties import spec_of
from vollmond.engine.standard.state import GameState
from vollmond.engine.standard.types import ActionKind, Phase

DAY_KINDS: Final = frozenset({ActionKind.SHOOT, ActionKind.TRANSFER_VOTE, ActionKind.INSTANT_KILL})
"""Abilities given with ``* NN #`` (by day); every other ability is ``NN #`` at night."""

NIGHT: Final = "night"
DAY: Final = "day"


def _target(n: int | None, key: Key = Key.HOUSE) -> Press:
    return Press(key, n) if n is not None else Press(Key.NOBODY)


def ability_offer(kind: ActionKind) -> str:
    """``day.<kind>`` for an ability given by day, ``night.<kind>`` for one given at night."""
    return f"{DAY if kind in DAY_KINDS else NIGHT}.{kind.value}"


def key_action(cmd: Command) -> KeyAction | None:
    """The entries and the offer of one player's command (None: not given by keys)."""
    if isinstance(cmd, UseAbility):
        key = Key.DAY_HOUSE if cmd.kind in DAY_KINDS else Key.HOUSE
        return KeyAction(cmd, (_target(cmd.target, key),), ability_offer(cmd.kind))
    if isinstance(cmd, Nominate):
        return KeyAction(cmd, (Press(Key.HOUSE, cmd.target),), "nominate")
    if isinstance(cmd, Vote):
        return KeyAction(cmd, (_target(cmd.target),), "abstain" if cmd.target is None else "vote")
    if isinstance(cmd, AnswerCall):
        return KeyAction(cmd, (Press(Key.YES if cmd.accept else Key.NO),), "answer")
    if isinstance(cmd, HangUp):
        return KeyAction(cmd, (Press(Key.HANG_UP),), "hang_up")
    if isinstance(cmd, ToggleCallMode):
        return KeyAction(cmd, (Press(Key.TOGGLE),), "toggle")
    if isinstance(cmd, PlaceCall):
        return KeyAction(cmd, (Press(Key.CALL, cmd.callee),), "call")
    if isinstance(cmd, Interject):
        return KeyAction(cmd, (Press(Key.DONE),), "interject")
    return None


def keypad(state: GameState, seat: int) -> list[KeyAction]:
    return [a for a in map(key_action, legal_actions(state, seat)) if a is not None]


def own_kinds(state: GameState, seat: int, *, night: bool) -> list[ActionKind]:
    """The seat's own abilities of that time of day (the steal last: it has its own step)."""
    abilities = spec_of(state.player(seat)).abilities
    kinds = [a.kind for a in abilities if (a.kind in DAY_KINDS) != night]
    return [k for k in kinds if k is not ActionKind.STEAL] or kinds


def key_probe(state: GameState, seat: int, presses: Sequence[Press]) -> Command | None:
    """The command an entry means now even where it is not allowed, so that the rules refuse
    it with their own reason ("nobody" has no such command: there is nothing to refuse)."""
    if len(presses) != 1 or not state.has_seat(seat):
        return None
    press = presses[0]
    if press.key is Key.YES or press.key is Key.NO:
        return AnswerCall(seat, accept=press.key is Key.YES)
    if press.key is Key.HANG_UP:
        return HangUp(seat)
    if press.key is Key.TOGGLE:
        return ToggleCallMode(seat)
    if press.key is Key.DONE:
        return Interject(seat)
    house = press.number
    if house is None:
        return None
    if press.key is Key.CALL:
        return PlaceCall(seat, house)
    legal = [c for c in legal_actions(state, seat) if isinstance(c, UseAbility)]
    if press.key is Key.DAY_HOUSE:
        usable = [c.kind for c in legal if c.kind in DAY_KINDS]
        kinds = usable or own_kinds(state, seat, night=False)
        return UseAbility(seat, kinds[0], house) if kinds else None
    if state.phase is Phase.DAY:
        return Nominate(seat, house)
    if state.phase is Phase.VOTE:
        return Vote(seat, house)
    if state.phase is Phase.NIGHT:
        # Prefer an ability usable on someone tonight (the witch's poison before a heal that
        # waits for the victim), so the reason spoken fits what the caller meant.
        usable = [c.kind for c in legal if c.kind not in DAY_KINDS]
        kinds = usable or own_kinds(state, seat, night=True)
        return UseAbility(seat, kinds[0], house) if kinds else None
    return None
