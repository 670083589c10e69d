"""A caller in a game of any rule set with a keypad (`HasKeypad`): narration and keys.

A rule set with calls between houses (`HasCalls`) has its own line (`game.py`: ringing, day
actions, the night walk); every other rule set is played through this one, which knows no
rule set's commands. What every game line does is `line.GameLineBase`. The rule
set says which key entries give which of the caller's legal commands (`RuleSet.keypad`), and
the texts come from its catalogue (``<ruleset>.phone.can.<offer>``). Everything the line says
comes from events delivered to the caller's viewer or from ``view(state, viewer)``; the legal
commands it reads are the caller's own seat's.

Keys: ``NN#`` a house, ``0#``/``##`` nobody, ``1``/``2`` yes/no when the rules ask, ``*#``
done; an entry that is the first of two (Amor's lovers) waits for the second. The info keys,
leaving (``#9``) and the moderators (``*9#``) are those of every game.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from vollmond.engine.core import Event
from vollmond.engine.ruleset import HasKeypad, Key, KeyAction, Press
from vollmond.i18n.render import load_catalogue
from vollmond.phone.session.keys import Entry, Hash, Single, Star, Token
from vollmond.phone.session.line import PHASE, ROLE, GameLineBase
from vollmond.phone.session.prompts import Line, Priority

if TYPE_CHECKING:
    from vollmond.phone.session.session import PhoneSession
    from vollmond.service.actor import GameActor

MAX_REMINDERS: Final = 3
"""Silence reminders per turn (a caller may just be listening)."""

TURN: Final = "turn"
"""The tag of a turn's prompt: withdrawn when what the caller can do changes."""


def has_keypad(ruleset: object) -> bool:
    """Whether a rule set is played by telephone at all."""
    return isinstance(ruleset, HasKeypad)


class RulesLine(GameLineBase):
    PHASE_CODES = frozenset({"phase_started", "stage_started"})
    START_CODES = frozenset(
        {
            "game_started",
            "role_assigned",
            "role_taken",
            "team_revealed",
            "pack_revealed",
            "wolves_told",
            "lovers_revealed",
            "mayor_elected",
            "captain_elected",
        }
    )

    def __init__(self, session: PhoneSession, actor: GameActor, seat: int | None) -> None:
        super().__init__(session, actor, seat)
        self._offered: tuple[tuple[str, tuple[Press, ...]], ...] = ()
        self._pending: tuple[Press, ...] = ()
        self._reminders = 0

    def t(self, key: str, **params: Any) -> str:
        return self.s.t(key, self.world, **params)

    # -- following the game ----------------------------------------------------------------
    def _attached_now(self) -> None:
        self._announce_turn()

    def _narrate(self, event: Event) -> None:
        phase = event.code in self.PHASE_CODES
        if phase:
            self._phase_begins(event.params)
        over = event.code == "game_over"
        # A phase's (or stage's) narration and the welcome describe what is past once the
        # next phase begins; the rest (a role, a death, the end) stays true.
        self.s.say(
            self._render(event),
            priority=Priority.URGENT if over else Priority.NEWS,
            remember=event.code != "chat",
            tag=PHASE
            if phase or event.code == "game_started"
            else ROLE
            if event.code == "role_assigned"
            else None,
        )
        if over:
            self._game_over()

    def state_changed(
        self, state: Any, phase_changed: bool, *, view_unchanged: bool = False
    ) -> None:
        if self.actor.ruleset.is_over(state):
            self._game_over()
            return
        if self._alive and self.seat is not None and not self._seat_alive():
            self._alive = False
            self.s.say(self.t("phone.game.dead"), priority=Priority.URGENT)
        self._announce_turn()

    def _announce_turn(self) -> None:
        """When what the caller can do changes (a new phase or night step, a ballot), the
        old turn prompt is withdrawn; if there is something to do, the caller hears it first
        (urgent): the keys and the time left."""
        actions = self._actions()
        offered = tuple((a.offer, a.presses) for a in actions)
        if offered == self._offered:
            return
        self._offered = offered
        self._pending, self._choice, self._reminders = (), [], 0
        self.s.prompts.withdraw(TURN)
        if actions:
            lines = self._can_lines(actions)
            self.s.say(*lines, *self._time_left(), priority=Priority.URGENT, tag=TURN)

    # -- what the caller can do (spoken) ---------------------------------------------------
    def _numbers_text(self, numbers: Sequence[int]) -> str:
        names = load_catalogue(self.s.lang)
        items = [str(n) for n in sorted(numbers)]
        if len(items) == 1:
            return items[0]
        sep, last = names.get("fmt.list_sep", ", "), names.get("fmt.list_and", ", ")
        return sep.join(items[:-1]) + last + items[-1]

    def _can_lines(self, actions: Sequence[KeyAction]) -> list[str]:
        """One line per offer, with the houses its first entry may name."""
        offers: dict[str, set[int]] = {}
        for action in actions:
            houses = offers.setdefault(action.offer, set())
            first = action.presses[0]
            if first.key is Key.HOUSE and first.number is not None:
                houses.add(first.number)
        lines = []
        for offer, houses in offers.items():
            targets = self._seats_text(sorted(houses)) if houses else ""
            numbers = self._numbers_text(sorted(houses)) if houses else ""
            lines.append(self.t(f"{self.rs}.phone.can.{offer}", targets=targets, numbers=numbers))
        return lines

    # -- Mode ------------------------------------------------------------------------------
    def _yes_or_no(self) -> bool:
        return any(a.presses[0].key in (Key.YES, Key.NO) for a in self._actions())

    def hash_immediate(self) -> bool:
        return False

    def reminder(self) -> Sequence[Line] | None:
        """After a silence: what the caller still has to do now and the time left (at most
        `MAX_REMINDERS` times a turn); nothing when there is nothing to do."""
        if self._confirm_leave or self._choice:
            return self.help()
        actions = self._actions()
        if not actions or self._reminders >= MAX_REMINDERS:
            return None
        self._reminders += 1
        return [*self._can_lines(actions), *self._time_left()]

    async def _keys(self, token: Token) -> None:
        press = self._press(token)
        actions = self._actions()
        if self.seat is None or (not actions and not self._alive):
            key = "phone.game.spectator_keys" if self.seat is None else "phone.game.dead_keys"
            self.s.say(self.t(key), remember=False)
            return
        if press is None:
            self._pending = ()
            self._not_here()
            return
        await self._enter(self.seat, press, actions)

    def _press(self, token: Token) -> Press | None:
        if isinstance(token, Single):
            return {"1": Press(Key.YES), "2": Press(Key.NO)}.get(token.key)
        if isinstance(token, Entry):
            return Press(Key.NOBODY) if token.number == 0 else Press(Key.HOUSE, token.number)
        if isinstance(token, Hash):
            return Press(Key.NOBODY)
        if isinstance(token, Star) and token.body == "" and token.end == "#":
            return Press(Key.DONE)
        return None

    async def _enter(self, seat: int, press: Press, actions: Sequence[KeyAction]) -> None:
        presses = (*self._pending, press)
        size = len(presses)
        fits = [a for a in actions if a.presses[:size] == presses]
        done = [a for a in fits if len(a.presses) == size]
        if done:
            self._pending = ()
            await self._submit_one_of(done)
            return
        if fits:
            self._pending = presses
            self.s.say(self.t(f"{self.rs}.phone.more.{fits[0].offer}"), remember=False)
            return
        self._pending = ()
        state = self.actor.state
        probe = self.keypad.key_probe(state, seat, presses) if state is not None else None
        if probe is None:
            self.s.refuse(self.t("phone.game.no_action"))
            return
        await self._submit(probe)

    def _describe(self, action: KeyAction) -> str:
        return self.t(f"{self.rs}.phone.do.{action.offer}")

    # -- info keys -------------------------------------------------------------------------
    def _phase_text(self) -> str:
        state = self.actor.state
        name = self.actor.ruleset.phase_name(state) if state is not None else "over"
        key = f"{self.rs}.phone.phase.{name}"
        return self.t(key) if key in load_catalogue(self.s.lang) else name

    def _status(self) -> list[str]:
        view = self._view()
        lines = [self.t("phone.game.status", phase=self._phase_text(), round=view.get("round"))]
        me = view.get("me")
        if isinstance(me, Mapping):
            role = self.world.role_name(str(me["role"]), self.s.lang)
            lines.append(self.t("phone.game.status_role", role=role, n=self.seat))
            if not self._alive:
                lines.append(self.t("phone.game.status_dead"))
        return lines + self.can_lines()

    def _role_lines(self) -> list[str]:
        me = self._view().get("me")
        if not isinstance(me, Mapping):
            return [self.t("phone.game.spectator_keys")]
        role = str(me["role"])
        lines = [
            self.t(
                "phone.game.status_role", role=self.world.role_name(role, self.s.lang), n=self.seat
            )
        ]
        key = f"{self.rs}.phone.role_help.{role}"
        if key in load_catalogue(self.s.lang):
            lines.append(self.t(key))
        return lines
