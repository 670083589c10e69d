"""What every game line does, whatever the rule set: a caller in a game.

The line subscribes to the game's actor with the caller's viewer (a seat, or a spectator).
Everything it says comes from events delivered to that viewer or from ``view(state, viewer)``;
it never reads another seat's secrets. A late joiner (or a caller back after a dropped call)
hears the log from the latest phase on, plus the start events. Keys become the rule set's
commands through its keypad (`HasKeypad`) and go through ``Hub.submit``; a refusal is spoken
with the rules' reason. The info keys (``#3`` ``#4`` ``#5`` ``#9``), leaving, the moderators
(``*9#``) and the choice between two commands for one entry are the same in every game.

Two lines build on this: `rules_line.RulesLine` (a turn is what the keypad offers) and
`game.GameLine` for rule sets with calls between houses (`HasCalls`: ringing, day actions,
the night walk).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Final

from vollmond.engine.core import Event, Rejection, Viewer
from vollmond.engine.ruleset import HasKeypad, KeyAction
from vollmond.i18n import render_event, render_rejection
from vollmond.i18n.render import load_catalogue
from vollmond.phone.session.keys import Info, Single, Star, Token
from vollmond.phone.session.prompts import Line, Live, Priority, Renders
from vollmond.phone.session.prompts.prewarm import sentence
from vollmond.phone.session.recording import RecordingNoticeLine
from vollmond.service.actor import GameActor, GameClosedError
from vollmond.service.hub import LobbyError
from vollmond.worlds import World, get_world

if TYPE_CHECKING:
    from vollmond.phone.session.session import PhoneSession

PHASE: Final = "phase"
"""The tag of what describes the running phase and nothing after it (its narration, the night
walk, the game's welcome before the first phase): withdrawn, unheard, when the next phase
begins. A turn's own keys have their line's tag (``turn``), withdrawn then too."""

ROLE: Final = "role"
"""The tag of the caller's role with its explanation (the deal): it stays true, but if it is
still unheard when the next phase begins it is shortened to the role's name (``#5`` explains
it)."""

TIMER_MIN_S: Final = 5
"""A timer line with less time left than this when it would play is dropped: by the time it
has been said, it is wrong (docs/decisions.md, "Stale news at a phase change")."""


def event_words(renders: Renders, event: Event, lang: str, world: World, ruleset: str) -> str:
    """What `event` is said as, made once for every caller of the node who hears it in the
    same language, world and rule set (the words depend on nothing else: an event addressed
    to one player says "du" by its audience, not by who hears it)."""
    return renders.words(
        event, (lang, world.id, ruleset), lambda: render_event(event, lang, world, ruleset)
    )


class GameLineBase(ABC):
    """Following a game, replaying its log, the keys of every game; the keys of the rules and
    what is said about them are the subclass's."""

    PHASE_CODES: ClassVar[frozenset[str]]
    """Events that open a phase or stage; a late joiner hears the log from the latest one."""
    START_CODES: ClassVar[frozenset[str]]
    """Events a caller who joins late (or re-dials) always hears again from the log."""

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
        self._choice: list[KeyAction] = []
        self._confirm_leave = False
        self._phase_at: float | None = None
        self._phase_s: float | None = None
        self._recording = RecordingNoticeLine(session, self.game_id, self.world)

    @abstractmethod
    def t(self, key: str, **params: Any) -> str:
        """A text of the catalogue, in the line's names."""

    # -- following the game ----------------------------------------------------------------
    async def attach(self) -> None:
        if self.seat is not None:
            self.s.say(self.t("phone.game.your_house", n=self.seat), remember=False)
            # Back after a dropped call: whether one lives is public, and decides the menus.
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
        self._recording.start()  # O4: a recording running now is announced to a late joiner
        if self.seat is not None:
            self.s.hub.presence.attach(self.game_id, self.seat)
        if self.actor.is_over:
            self._game_over()
        else:
            self._attached_now()

    def _attached_now(self) -> None:
        """After the catch-up, in a running game (the keys of a turn already open)."""
        return  # nothing by default

    def _catch_up(self, history: Sequence[tuple[int, Event]], *, first: bool) -> None:
        latest = 0
        if first:
            for index, (_, event) in enumerate(history):
                if event.code in self.PHASE_CODES:
                    latest = index
        for index, (seq, event) in enumerate(history):
            self._read(event)
            if first and index < latest and event.code not in self.START_CODES:
                self._last_seq = max(self._last_seq, seq)
                continue
            self.deliver(seq, event)

    def _read(self, event: Event) -> None:
        """Every event of the log, also one a late joiner does not hear (the deal's
        composition, say)."""
        return  # nothing by default

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
        self._narrate(event)

    @abstractmethod
    def _narrate(self, event: Event) -> None: ...

    def _render(self, event: Event) -> str:
        """The sentence of `event` for this caller (shared with the table: `event_words`)."""
        return event_words(self.s.prompts.renders, event, self.s.lang, self.world, self.rs)

    @abstractmethod
    def state_changed(
        self, state: Any, phase_changed: bool, *, view_unchanged: bool = False
    ) -> None: ...

    def _phase_begins(self, params: Mapping[str, Any]) -> None:
        """A phase began now, with its length if it has one (for "noch N Sekunden"). What
        described the one before (tagged `PHASE`) is withdrawn if still unheard; before the
        first phase there is none, and the game's welcome belongs to the first."""
        if self._phase_at is not None:
            self.s.prompts.withdraw(PHASE)
            self._shorten_role()
        seconds = params.get("seconds")
        self._phase_at = self.s.clock()
        self._phase_s = float(seconds) if isinstance(seconds, int | float) else None

    def _shorten_role(self) -> None:
        me = self._view().get("me") if self.seat is not None else None
        if isinstance(me, Mapping) and me.get("role"):
            role = self.world.role_name(str(me["role"]), self.s.lang)
            self.s.prompts.shorten(ROLE, sentence(self.t("phone.game.role_short", role=role)))

    def _game_over(self) -> None:
        if self._over:
            return
        self._over = True
        self.s.spawn(self.s.run_exclusive(self._back_to_menu), name=f"over:{self.game_id}")

    async def _back_to_menu(self, why: str = "phone.menu.game_over") -> None:
        """Back to the announcer; `why` is what the caller hears (the game ended, or they
        left it: a dead player or a spectator leaves a game that goes on)."""
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
        """Whether the caller's seat lives (public: every death is announced). Asked after
        every command on every line, so it is the actor's answer, not a view of one's own."""
        return self.seat is not None and not self.actor.seat_out(self.seat)

    def _actions(self) -> list[KeyAction]:
        """The caller's own legal commands now, with their keys."""
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

    def _time_left(self) -> list[Line]:
        """ "noch 90 Sekunden": the time left in this phase, when the phase has a limit; a
        live line, said for the moment it plays (or not at all when under `TIMER_MIN_S`)."""
        if self._phase_s is None or self._phase_at is None:
            return []
        started, end = self._phase_at, self._phase_at + self._phase_s

        def words() -> str | None:
            left = int(end - self.s.clock())
            # A new phase begun: the line was about one that is past.
            past = self._phase_at != started
            return None if past or left < TIMER_MIN_S else self.t("phone.game.time_left", n=left)

        now = words()
        return [] if now is None else [Live(now, words)]

    # -- what the caller can do (spoken) ---------------------------------------------------
    @abstractmethod
    def _can_lines(self, actions: Sequence[KeyAction]) -> list[str]:
        """What the caller can do with these commands, and with which keys."""

    def can_lines(self) -> list[str]:
        lines = self._can_lines(self._actions())
        if lines:
            return lines
        if self.seat is None:
            return [self.t("phone.game.spectator_keys")]
        if not self._alive:
            return [self.t("phone.game.dead_keys")]
        return [self.t("phone.can.nothing")]

    # -- Mode ------------------------------------------------------------------------------
    def immediate(self) -> frozenset[str]:
        """Keys that act at once, without ``#``: the answer to a question."""
        if self._confirm_leave:
            return frozenset("12")
        if self._choice:
            return frozenset(str(i) for i in range(1, min(len(self._choice), 9) + 1))
        if self._yes_or_no():
            return frozenset("12")
        return frozenset()

    @abstractmethod
    def _yes_or_no(self) -> bool:
        """Whether ``1`` and ``2`` answer something now (a ringing phone, a question)."""

    @abstractmethod
    def hash_immediate(self) -> bool: ...

    @abstractmethod
    def reminder(self) -> Sequence[Line] | None: ...

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
        await self._keys(token)

    @abstractmethod
    async def _keys(self, token: Token) -> None:
        """A key of the rules (not an info key, not the moderators)."""

    def _not_here(self) -> None:
        self.s.refuse(self.t("phone.keyerror.not_here"))

    # several commands for one entry (the witch's heal or poison on one house): which?
    @abstractmethod
    def _describe(self, action: KeyAction) -> str:
        """What choosing `action` does, in a few words."""

    def _choice_text(self) -> str:
        items = [
            self.t("phone.choose_item", n=i, action=self._describe(a))
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
        self._not_here()

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
            self._not_here()

    @abstractmethod
    def _status(self) -> list[str]: ...

    @abstractmethod
    def _role_lines(self) -> list[str]: ...

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
        """``*9#`` or ``*9 R NN #``: O1, the moderators are called. The alarm goes into the
        moderation queue; the caller hears the confirmation or, past the misuse limit, when a
        call is possible again. Spectators and dead players may call too (they see and hear
        the table)."""
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
                player = None  # an unknown house is not an accusation; the call still counts
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
        self._after_operator(rest)

    def _after_operator(self, rest: str) -> None:
        """Something to add after the moderators were called (a hint about the keys)."""
        return  # nothing by default

    def moderation_notice(self, kind: str, message: str) -> None:
        """A warning, mute, kick or abort from the moderators, spoken at once; after a kick
        or an abort the caller is back in the announcer."""
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
