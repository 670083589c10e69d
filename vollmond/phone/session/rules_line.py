"""A caller in a game of any rule set with a keypad (`HasKeypad`): narration and keys.

The standard rules have their own line (`game.py`: calls, the night walk, interjections);
every other rule set is played through this one, which knows no rule set's commands. The rule
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

from vollmond.engine.core import Event, Rejection, Viewer
from vollmond.engine.ruleset import HasKeypad, Key, KeyAction, Press
from vollmond.i18n import render_event, render_rejection
from vollmond.i18n.render import load_catalogue
from vollmond.phone.session.keys import Entry, Hash, Info, Single, Star, Token
from vollmond.phone.session.prompts import Priority
from vollmond.phone.session.recording import RecordingNoticeLine
from vollmond.service.actor import GameActor, GameClosedError
from vollmond.service.hub import LobbyError
from vollmond.worlds import get_world

if TYPE_CHECKING:
    from vollmond.phone.session.session import PhoneSession

MAX_REMINDERS: Final = 3
"""Silence reminders per turn (a caller may just be listening)."""

TURN: Final = "turn"
"""The tag of a turn's prompt: withdrawn when what the caller can do changes."""

START_CODES: Final = frozenset(
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
"""Events a caller who joins late (or re-dials) always hears again from the log."""

PHASE_CODES: Final = frozenset({"phase_started", "stage_started"})
"""Events that open a phase or stage; a late joiner hears the log from the latest one."""


def has_keypad(ruleset: object) -> bool:
    """Whether a rule set is played through this line."""
    return isinstance(ruleset, HasKeypad)


class RulesLine:
    def __init__(self, session: PhoneSession, actor: GameActor, seat: int | None) -> None:
        assert isinstance(actor.ruleset, HasKeypad)
        self.s = session
        self.actor = actor
        self.keypad: HasKeypad = actor.ruleset
        self.rs: str = actor.ruleset.id
        self.game_id = actor.game_id
        self.seat = seat
        self.viewer = Viewer.player(seat) if seat is not None else Viewer.spectator()
        self.world = get_world(actor.options.world)
        self._last_seq = 0
        self._attached = False
        self._over = False
        self._alive = seat is not None
        self._offered: tuple[tuple[str, tuple[Press, ...]], ...] = ()
        self._pending: tuple[Press, ...] = ()
        self._choice: list[KeyAction] = []
        self._confirm_leave = False
        self._reminders = 0
        self._phase_at: float | None = None
        self._phase_s: float | None = None
        self._recording = RecordingNoticeLine(session, self.game_id, self.world)

    def t(self, key: str, **params: Any) -> str:
        return self.s.t(key, self.world, **params)

    # -- following the game ----------------------------------------------------------------
    async def attach(self) -> None:
        if self.seat is not None:
            self.s.say(self.t("phone.game.your_house", n=self.seat), remember=False)
            self._alive = self._seat_alive()
            if not self._alive:
                self.s.say(self.t("phone.game.dead"), remember=False)
        first = True
        while True:
            sent_out = self.actor.next_event_seq
            history = await self.actor.history_for(self.viewer, self._last_seq)
            self._catch_up(history, first=first)
            first = False
            if self.actor.next_event_seq == sent_out:
                break
        self.actor.subscribe(self)
        self._attached = True
        if self.s.enforcer is not None:
            self.s.enforcer.watch(self, self.game_id, self.seat, self.s.person)
        self._recording.start()
        if self.seat is not None:
            self.s.hub.presence.attach(self.game_id, self.seat)
        state = self.actor.state
        if state is not None and self.actor.ruleset.is_over(state):
            self._game_over()
        else:
            self._announce_turn()

    def _catch_up(self, history: Sequence[tuple[int, Event]], *, first: bool) -> None:
        latest = 0
        if first:
            for index, (_, event) in enumerate(history):
                if event.code in PHASE_CODES:
                    latest = index
        for index, (seq, event) in enumerate(history):
            if first and index < latest and event.code not in START_CODES:
                self._last_seq = max(self._last_seq, seq)
                continue
            self.deliver(seq, event)

    def detach(self) -> None:
        if not self._attached:
            return
        self._attached = False
        self.actor.unsubscribe(self)
        if self.s.enforcer is not None:
            self.s.enforcer.unwatch(self)
        self._recording.stop()
        if self.seat is not None:
            self.s.hub.presence.detach(self.game_id, self.seat)

    # Subscriber
    def deliver(self, seq: int, event: Event) -> None:
        if seq <= self._last_seq:
            return
        self._last_seq = seq
        if event.code in PHASE_CODES:
            seconds = event.params.get("seconds")
            self._phase_at = self.s.clock()
            self._phase_s = float(seconds) if isinstance(seconds, int | float) else None
        over = event.code == "game_over"
        self.s.say(
            render_event(event, self.s.lang, self.world, self.rs),
            priority=Priority.URGENT if over else Priority.NEWS,
            remember=event.code != "chat",
        )
        if over:
            self._game_over()

    def state_changed(self, state: Any, phase_changed: bool) -> None:
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

    def _game_over(self) -> None:
        if self._over:
            return
        self._over = True
        self.s.spawn(self.s.run_exclusive(self._back_to_menu), name=f"over:{self.game_id}")

    async def _back_to_menu(self, why: str = "phone.menu.game_over") -> None:
        if self.s.mode is not self:
            return
        self.detach()
        self.s.set_mode(self.s.announcer)
        self.s.say(self.t(why), priority=Priority.URGENT, remember=False)
        self.s.announcer.after_game()

    # -- what the caller may know ----------------------------------------------------------
    def _view(self) -> dict[str, Any]:
        return self.actor.view_for(self.viewer)

    def _seat_alive(self) -> bool:
        if self.seat is None or self.actor.state is None:
            return self.seat is not None
        for seat in self._view().get("seats", []):
            if isinstance(seat, Mapping) and seat.get("seat") == self.seat:
                return bool(seat.get("alive", True))
        return False

    def _actions(self) -> list[KeyAction]:
        state = self.actor.state
        if state is None or self.seat is None or self._over:
            return []
        return list(self.keypad.keypad(state, self.seat))

    def _seats_text(self, seats: Sequence[int]) -> str:
        names = load_catalogue(self.s.lang)
        numbers = [str(n) for n in sorted(seats)]
        if len(numbers) == 1:
            return self.t("fmt.seat", n=numbers[0])
        sep, last = names.get("fmt.list_sep", ", "), names.get("fmt.list_and", ", ")
        return self.t("fmt.seats", list=sep.join(numbers[:-1]) + last + numbers[-1])

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

    def can_lines(self) -> list[str]:
        actions = self._actions()
        if actions:
            return self._can_lines(actions)
        if self.seat is None:
            return [self.t("phone.game.spectator_keys")]
        if not self._alive:
            return [self.t("phone.game.dead_keys")]
        return [self.t("phone.can.nothing")]

    def _time_left(self) -> list[str]:
        if self._phase_s is None or self._phase_at is None:
            return []
        left = int(self._phase_s - (self.s.clock() - self._phase_at))
        return [self.t("phone.game.time_left", n=left)] if left > 0 else []

    # -- Mode ------------------------------------------------------------------------------
    def immediate(self) -> frozenset[str]:
        if self._confirm_leave:
            return frozenset("12")
        if self._choice:
            return frozenset(str(i) for i in range(1, min(len(self._choice), 9) + 1))
        if any(a.presses[0].key in (Key.YES, Key.NO) for a in self._actions()):
            return frozenset("12")
        return frozenset()

    def hash_immediate(self) -> bool:
        return False

    def reminder(self) -> list[str] | None:
        """After a silence: what the caller still has to do now and the time left (at most
        `MAX_REMINDERS` times a turn); nothing when there is nothing to do."""
        if self._confirm_leave or self._choice:
            return self.help()
        actions = self._actions()
        if not actions or self._reminders >= MAX_REMINDERS:
            return None
        self._reminders += 1
        return self._can_lines(actions) + self._time_left()

    def help(self) -> list[str]:
        if self._confirm_leave:
            return [self.t("phone.game.leave_confirm")]
        if self._choice:
            return [self._choice_text()]
        return [*self.can_lines(), self.t("phone.info_keys")]

    async def handle(self, token: Token) -> None:
        if isinstance(token, Info):
            await self._info(token.digit)
            return
        if self._confirm_leave:
            await self._leave_answer(token)
            return
        if self._choice:
            await self._pick(token)
            return
        if isinstance(token, Star) and token.body.startswith("9") and token.end == "#":
            await self._operator(token.body[1:])
            return
        press = self._press(token)
        actions = self._actions()
        if self.seat is None or (not actions and not self._alive):
            key = "phone.game.spectator_keys" if self.seat is None else "phone.game.dead_keys"
            self.s.say(self.t(key), remember=False)
            return
        if press is None:
            self._pending = ()
            self.s.refuse(self.t("phone.keyerror.not_here"))
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

    # several commands for one entry: the caller is asked which
    def _choice_text(self) -> str:
        items = [
            self.t("phone.choose_item", n=i, action=self.t(f"{self.rs}.phone.do.{a.offer}"))
            for i, a in enumerate(self._choice, start=1)
        ]
        return self.t("phone.choose", list="; ".join(items))

    async def _submit_one_of(self, options: Sequence[KeyAction]) -> None:
        if len(options) == 1:
            await self._submit(options[0].command)
            return
        self._choice = list(options)
        self.s.say(self._choice_text())

    async def _pick(self, token: Token) -> None:
        key = token.key if isinstance(token, Single) else getattr(token, "digits", "")
        options, self._choice = self._choice, []
        if key.isdigit() and 1 <= int(key) <= len(options):
            await self._submit(options[int(key) - 1].command)
            return
        self.s.refuse(self.t("phone.keyerror.not_here"))

    # -- info keys -------------------------------------------------------------------------
    async def _info(self, digit: str) -> None:
        if digit == "3":
            self.s.say(*self._status())
        elif digit == "4":
            self.s.say(*self._who_lives())
        elif digit == "5":
            self.s.say(*self._role_lines())
        elif digit == "9":
            if self.seat is None or not self._alive:
                await self._back_to_menu("phone.game.leaving")
            else:
                self._confirm_leave = True
                self.s.say(self.t("phone.game.leave_confirm"))
        else:
            self.s.refuse(self.t("phone.keyerror.not_here"))

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

    def _who_lives(self) -> list[str]:
        seats = [s for s in self._view().get("seats", []) if isinstance(s, Mapping)]
        alive = [int(s["seat"]) for s in seats if s.get("alive")]
        dead = [s for s in seats if not s.get("alive")]
        lines = [self.t("phone.game.alive", list=self._seats_text(alive))]
        if dead:
            items = [
                self.t(
                    "fmt.death",
                    seat=self.t("fmt.seat", n=s["seat"]),
                    role=self.world.role_name(str(s["role"]), self.s.lang)
                    if s.get("role")
                    else self.t("fmt.unknown"),
                )
                for s in dead
            ]
            lines.append(self.t("phone.game.dead_list", list="; ".join(items)))
        return lines

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

    async def _leave_answer(self, token: Token) -> None:
        key = token.key if isinstance(token, Single) else getattr(token, "digits", "")
        self._confirm_leave = False
        if key == "1" and self.seat is not None:
            await self._submit(self.actor.ruleset.leave(self.seat))
            await self._back_to_menu("phone.game.leaving")
        elif key == "2":
            self.s.say(self.t("phone.game.stay"), remember=False)
        else:
            self._confirm_leave = True
            self.s.say(self.t("phone.game.leave_confirm"), remember=False)

    async def _operator(self, rest: str) -> None:
        from vollmond.phone.session.session import OperatorCall  # noqa: PLC0415

        reason: int | None = None
        player: int | None = None
        if rest:
            if not rest.isdigit() or rest[0] not in "1234":
                self.s.say(self.t("phone.operator_bad_reason"), remember=False)
                return
            reason = int(rest[0])
            player = int(rest[1:]) if rest[1:] else None
        self.s.report_operator(
            OperatorCall(self.game_id, self.seat, reason, player, self.s.clock())
        )
        if self.s.enforcer is not None:
            state = self.actor.state
            if player is not None and (state is None or not _has_seat(self._view(), player)):
                player = None
            result = await self.s.enforcer.raise_alarm(
                self.game_id,
                person=self.s.person,
                house=self.seat,
                reason=reason,
                accused=player,
                lang=self.s.lang,
            )
            self.s.say(result.message, remember=False)
        elif reason is not None and player is not None:
            seat = self.t("fmt.seat", n=player)
            self.s.say(self.t("phone.operator_called_about", reason=reason, seat=seat))
        else:
            self.s.say(self.t("phone.operator_called"))

    def moderation_notice(self, kind: str, message: str) -> None:
        """A warning, mute, kick or abort from the moderators, spoken at once."""
        self.s.say(message, priority=Priority.URGENT, remember=False)
        if kind in ("kick", "game_aborted"):
            self.s.spawn(self.s.run_exclusive(self._back_to_menu), name=f"kick:{self.game_id}")

    @property
    def lang(self) -> str:
        return self.s.lang

    # -- commands --------------------------------------------------------------------------
    async def _submit(self, command: Any) -> None:
        try:
            outcome = await self.s.hub.submit(self.game_id, command)
        except (LobbyError, GameClosedError):
            self.s.say(self.t("phone.lobby.not_running"), remember=False)
            return
        if isinstance(outcome, Rejection):
            self.s.refuse(render_rejection(outcome, self.s.lang, self.world, self.rs))


def _has_seat(view: Mapping[str, Any], seat: int) -> bool:
    return any(isinstance(s, Mapping) and s.get("seat") == seat for s in view.get("seats", []))
