"""A caller in a game: narration of what the viewer may know, and keys mapped to commands.

The line subscribes to the game's actor with the caller's viewer (a seat, or a spectator).
Everything it says comes from events delivered to that viewer or from ``view(state, viewer)``
(own role, own legal actions, public seats) plus the deck's public composition (the night walk,
``RuleSet.night_walk``); it never reads another seat's secrets. Keys become engine commands and go
through ``Hub.submit``; a refusal is spoken with the engine's reason and the valid choices.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from vollmond.engine.core import Event, Rejection, Viewer
from vollmond.engine.ruleset import CommandDecodeError
from vollmond.engine.standard import (
    AnswerCall,
    Command,
    GameState,
    HangUp,
    Interject,
    Leave,
    Nominate,
    PlaceCall,
    ToggleCallMode,
    UseAbility,
    Vote,
)
from vollmond.engine.standard.queries import spec
from vollmond.engine.standard.types import ActionKind, Phase, RoleId
from vollmond.i18n import render_event, render_rejection, role_explanation
from vollmond.i18n.render import load_catalogue
from vollmond.phone.session.keys import Entry, Hash, Info, Single, Star, Token
from vollmond.phone.session.prompts import Priority, tones
from vollmond.phone.session.recording import RecordingNoticeLine
from vollmond.service.actor import GameActor, GameClosedError
from vollmond.service.hub import LobbyError
from vollmond.worlds import get_world

MAX_REMINDERS: Final = 3
"""Silence reminders per phase in a game (a caller may just be listening)."""

REMIND_IN: Final = frozenset({Phase.NIGHT, Phase.VOTE})
"""Phases with a silence reminder: the night's action and the vote. Not by day or in the
morning, when the market place talks and a prompt would be spoken over it."""

URGENT: Final = Priority.URGENT
NEWS: Final = Priority.NEWS

TURN: Final = "turn"
"""The tag of a turn's prompt (the phase's start, the caller's keys, the time left): urgent
while its phase runs, withdrawn when the next phase begins (it would be wrong by then)."""

if TYPE_CHECKING:
    from vollmond.phone.session.session import PhoneSession

DAY_KINDS: Final = frozenset({ActionKind.SHOOT, ActionKind.TRANSFER_VOTE, ActionKind.INSTANT_KILL})
"""Abilities given with ``* NN #`` (by day); every other ability is ``NN #`` at night."""

RING_ENDS: Final = frozenset(
    {"call_connected", "call_declined", "call_missed", "call_ended", "call_busy", "seance_opened"}
)
"""Events after which no phone of this caller rings any more."""

START_CODES: Final = frozenset(
    {"game_started", "role_assigned", "team_revealed", "partner_revealed", "role_taken"}
)
"""Events a caller who joins late (or re-dials) always hears again from the log."""


class GameLine:
    def __init__(self, session: PhoneSession, actor: GameActor, seat: int | None) -> None:
        self.s = session
        self.actor = actor
        self.game_id = actor.game_id
        self.seat = seat
        self.viewer = Viewer.player(seat) if seat is not None else Viewer.spectator()
        self.world = get_world(actor.options.world)
        self.composition: dict[str, int] = {}
        self._last_seq = 0
        self._choice: list[Command] = []
        self._confirm_leave = False
        self._attached = False
        self._over = False
        self._alive = seat is not None
        self._phase_at: float | None = None
        self._reminded_in = -1
        self._reminders = 0
        self._phase_s: float | None = None
        self._recording = RecordingNoticeLine(session, self.game_id, self.world)

    # -- following the game ----------------------------------------------------------------
    async def attach(self) -> None:
        state = self.actor.state
        if self.seat is not None:
            self.s.say(self.s.t("phone.game.your_house", n=self.seat), remember=False)
            # Back after a dropped call: whether one lives is public, and decides the menus.
            self._alive = state is None or state.player(self.seat).alive
            if not self._alive:
                self.s.say(self.s.t("phone.game.dead"), remember=False)
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
        if self.actor.state is not None and self.actor.state.phase is Phase.OVER:
            self._game_over()

    def _catch_up(self, history: Sequence[tuple[int, Event]], *, first: bool) -> None:
        latest_phase = 0
        if first:
            for index, (_, event) in enumerate(history):
                if event.code == "phase_started":
                    latest_phase = index
        for index, (seq, event) in enumerate(history):
            if event.code == "game_started":
                self._learn_composition(event)
            if first and index < latest_phase and event.code not in START_CODES:
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
        self._narrate(event)

    def state_changed(self, state: GameState, phase_changed: bool) -> None:
        if state.phase is Phase.OVER:
            self._game_over()
            return
        # Who is alive is public (every death is announced), so the state may answer this
        # cheaply for every command instead of building this viewer's whole view.
        if self._alive and self.seat is not None and not state.player(self.seat).alive:
            self._alive = False
            self._choice = []
            self._confirm_leave = False
            self.s.say(self.s.t("phone.game.dead"), priority=URGENT)

    # -- narration -------------------------------------------------------------------------
    def _learn_composition(self, event: Event) -> None:
        raw = event.params.get("composition")
        if isinstance(raw, Mapping):
            self.composition = {str(k): int(v) for k, v in raw.items() if isinstance(v, int)}

    def _render(self, event: Event) -> str:
        return render_event(event, self.s.lang, self.world)

    def _narrate(self, event: Event) -> None:
        code = event.code
        params = event.params
        say = self.s.say
        if code == "game_started":
            self._learn_composition(event)
        if code == "phase_started":
            self._phase_started(event)
            return
        if code in RING_ENDS:
            self.s.prompts.stop_tone("ringing", "incoming_ring")
        if code == "call_incoming":
            # An alert: the ring first (audio at once, nothing to render), then who calls and
            # the keys; it goes before whatever the callee was hearing and cuts menus and help.
            self.s.tone("incoming_ring", tones.incoming_ring(1), priority=Priority.ALERT)
            say(self._render(event), self.s.t("phone.can.answer"), priority=Priority.ALERT)
            cycles = self._ring_cycles(1.8) - 1
            if cycles > 0:
                self.s.tone("incoming_ring", tones.incoming_ring(cycles))
            return
        if code == "call_outgoing":
            say(self._render(event), priority=NEWS)
            self.s.tone("ringing", tones.ringing(self._ring_cycles(5.0)))
            return
        if code == "call_busy":
            self.s.tone("busy", tones.busy(), priority=NEWS)
            say(self._render(event), priority=NEWS)
            return
        if code == "call_declined" and params.get("callee") == self.seat:
            say(self.s.t("phone.game.you_declined"), priority=NEWS)
            return
        priority = URGENT if code == "game_over" else NEWS
        say(self._render(event), priority=priority, remember=code != "chat")
        if code == "game_over":
            self._game_over()

    def _phase_started(self, event: Event) -> None:
        """A new phase: for a living player who acts in it this is their turn (urgent: the
        phase, their keys and the time left come first); the night walk follows, short and cut
        by any key. The previous turn's prompt, if still unheard, is withdrawn: its keys and
        time are past, and it would hold back every urgent prompt after it."""
        params = event.params
        self._phase_at = self.s.clock()
        seconds = params.get("seconds")
        self._phase_s = float(seconds) if isinstance(seconds, int | float) else None
        self.s.prompts.withdraw(TURN)
        night = params.get("phase") == "night" and params.get("step") != "steal"
        own = self._night_turn() if night else []
        # At night only those with a step of their own have a turn; for the others the
        # night's start is game news.
        turn = self._alive and self.seat is not None and not night
        if own:
            # Whoever acts tonight hears a short start, their keys and the time left (which
            # replaces the narrator's "ihr habt 2 Minuten"), so they can act within seconds.
            start = self.s.t("phone.night.start", round=params.get("round"))
            self.s.say(start, *own, priority=URGENT, tag=TURN)
        elif turn:
            self.s.say(self._render(event), priority=URGENT, tag=TURN)
        else:
            self.s.say(self._render(event), priority=NEWS)
        if night:
            self._night_walk()
        elif self._alive:
            self._own_turn(always=params.get("phase") != "night")

    def _night_turn(self) -> list[str]:
        """The caller's own night instructions, if their role has a step tonight."""
        me = self._me()
        my_role = me.get("role") if me is not None and self._alive else None
        if my_role not in self.actor.ruleset.night_walk(self.composition):
            return []
        lines = self._ability_lines(night=True)
        if not lines:
            return []
        return [self.s.t("phone.night.your_turn"), *lines, *self._time_left()]

    def _ring_cycles(self, cycle_s: float) -> int:
        """Ring as long as the game lets a call ring (a public founding option); an answer,
        a refusal or the end of the ringing stops the tone earlier."""
        ring_s: float = self.actor.options.calls.ring_s
        return max(1, round(ring_s / cycle_s))

    def _night_walk(self) -> None:
        """After the caller's own instructions (urgent, :meth:`_night_turn`), every night role
        of the deck in a fixed order, dead or alive (timing reveals nothing), one short line
        each. The walk is the same on every line; a key cuts it short on this line only."""
        names = load_catalogue(self.s.lang)
        steps = self.actor.ruleset.night_walk(self.composition)
        if self._alive:
            others = self._other_lines()
            if others:
                self.s.say(*others, priority=NEWS)
        if self.s.expert:
            return
        for key in steps:
            step = f"phone.night.step.{key}"
            self.s.say(
                self.s.t(step if step in names else "phone.night.step.other", self.world),
                remember=False,
            )

    def _time_left(self) -> list[str]:
        """ "noch 90 Sekunden": the time left in this phase, when the phase has a limit."""
        if self._phase_s is None or self._phase_at is None:
            return []
        left = int(self._phase_s - (self.s.clock() - self._phase_at))
        if left <= 0:
            return []
        return [self.s.t("phone.game.time_left", n=left)]

    def _own_turn(self, *, always: bool) -> None:
        lines = self.can_lines()
        if lines and (always or self._ability_lines(night=True)):
            self.s.say(*lines, *self._time_left(), priority=URGENT, tag=TURN)

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
        self.s.say(self.s.t(why), priority=URGENT, remember=False)
        self.s.announcer.after_game()

    # -- what the caller may know ----------------------------------------------------------
    def _view(self) -> dict[str, Any]:
        return self.actor.view_for(self.viewer)

    def _me(self) -> dict[str, Any] | None:
        if self.seat is None or self.actor.state is None:
            return None
        me = self._view().get("me")
        return me if isinstance(me, dict) else None

    def legal(self) -> list[Command]:
        """The caller's own legal actions, as the view lists them."""
        me = self._me()
        if me is None:
            return []
        out: list[Command] = []
        for raw in me.get("legal", []):
            with contextlib.suppress(CommandDecodeError):
                out.append(self.actor.ruleset.decode_command(raw, players_only=True))
        return out

    def _call(self) -> dict[str, Any] | None:
        me = self._me()
        call = me.get("call") if me is not None else None
        return call if isinstance(call, dict) else None

    def _ringing_in(self) -> bool:
        call = self._call()
        return call is not None and call.get("status") == "ringing" and bool(call.get("incoming"))

    # -- what the caller can do (spoken) ---------------------------------------------------
    def _seats_text(self, seats: Sequence[int]) -> str:
        names = load_catalogue(self.s.lang)
        numbers = [str(n) for n in sorted(seats)]
        if len(numbers) == 1:
            return self.s.t("fmt.seat", n=numbers[0])
        sep, last = names.get("fmt.list_sep", ", "), names.get("fmt.list_and", ", ")
        joined = sep.join(numbers[:-1]) + last + numbers[-1]
        return self.s.t("fmt.seats", list=joined)

    def _abilities(self) -> dict[ActionKind, list[int | None]]:
        kinds: dict[ActionKind, list[int | None]] = {}
        for cmd in self.legal():
            if isinstance(cmd, UseAbility):
                kinds.setdefault(cmd.kind, []).append(cmd.target)
        return kinds

    def _ability_lines(self, *, night: bool) -> list[str]:
        lines = []
        for kind, targets in self._abilities().items():
            if (kind in DAY_KINDS) == night:
                continue
            houses = [t for t in targets if t is not None]
            action = self.s.t(f"action.{kind.value}", self.world)
            key = "phone.can.day_ability" if kind in DAY_KINDS else "phone.can.ability"
            if houses:
                targets_text = self._seats_text(houses)
                lines.append(self.s.t(key, self.world, action=action, targets=targets_text))
            if None in targets:
                lines.append(self.s.t("phone.can.ability_nobody"))
        return lines

    def _other_lines(self) -> list[str]:
        legal = self.legal()
        types = {type(c) for c in legal}
        lines = self._ability_lines(night=False)
        if Nominate in types:
            lines.append(self.s.t("phone.can.nominate"))
        votes = [c.target for c in legal if isinstance(c, Vote) and c.target is not None]
        if votes:
            lines.append(self.s.t("phone.can.vote", targets=self._seats_text(votes)))
        if AnswerCall in types:
            lines.append(self.s.t("phone.can.answer"))
        if HangUp in types:
            lines.append(self.s.t("phone.can.hang_up"))
        if ToggleCallMode in types:
            lines.append(self.s.t("phone.can.toggle"))
        if PlaceCall in types:
            lines.append(self.s.t("phone.can.call"))
        if Interject in types:
            lines.append(self.s.t("phone.can.interject"))
        return lines

    def can_lines(self) -> list[str]:
        lines = self._ability_lines(night=True) + self._other_lines()
        if lines:
            return lines
        if self.seat is None:
            return [self.s.t("phone.game.spectator_keys")]
        if not self._alive:
            return [self.s.t("phone.game.dead_keys")]
        return [self.s.t("phone.can.nothing")]

    # -- Mode ------------------------------------------------------------------------------
    def immediate(self) -> frozenset[str]:
        if self._confirm_leave:
            return frozenset("12")
        if self._choice:
            return frozenset(str(i) for i in range(1, min(len(self._choice), 9) + 1))
        if self._ringing_in():
            return frozenset("12")
        return frozenset()

    def hash_immediate(self) -> bool:
        return self._call() is not None

    def reminder(self) -> list[str] | None:
        """After a silence: what the caller still has to do in this phase and the time left
        (at most `MAX_REMINDERS` times a phase); nothing when there is nothing to do."""
        if self._confirm_leave or self._choice:
            return self.help()
        state = self.actor.state
        if state is None or not self._alive or self.seat is None:
            return None
        if state.phase not in REMIND_IN or self._call() is not None:
            return None  # by day people talk; in a call the caller is busy
        if self._reminded_in == state.phase_seq and self._reminders >= MAX_REMINDERS:
            return None
        night = state.phase is Phase.NIGHT
        lines = self._ability_lines(night=night)
        votes = [c.target for c in self.legal() if isinstance(c, Vote) and c.target is not None]
        if votes:
            lines.append(self.s.t("phone.can.vote", targets=self._seats_text(votes)))
        if not lines:
            return None
        if self._reminded_in != state.phase_seq:
            self._reminded_in, self._reminders = state.phase_seq, 0
        self._reminders += 1
        return lines + self._time_left()

    def help(self) -> list[str]:
        if self._confirm_leave:
            return [self.s.t("phone.game.leave_confirm")]
        if self._choice:
            return [self._choice_text()]
        return [*self.can_lines(), self.s.t("phone.info_keys")]

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
        if isinstance(token, Star) and token.body.startswith("9"):
            await self._operator(token.body[1:])
            return
        if self.seat is None or not self._alive:
            key = "phone.game.spectator_keys" if self.seat is None else "phone.game.dead_keys"
            self.s.say(self.s.t(key), remember=False)
            return
        seat = self.seat
        if isinstance(token, Single | Entry) and self._ringing_in():
            answer = token.key if isinstance(token, Single) else token.digits
            if answer in ("1", "2"):
                await self._submit(AnswerCall(seat, accept=answer == "1"))
                return
        if isinstance(token, Single):
            self._not_here()
        elif isinstance(token, Hash):
            await self._hash(seat)
        elif isinstance(token, Star):
            await self._star(seat, token)
        elif isinstance(token, Entry):
            if token.number == 0:
                await self._nobody(seat)
            else:
                await self._target(seat, token.number)
        else:
            self._not_here()

    def _not_here(self) -> None:
        self.s.refuse(self.s.t("phone.keyerror.not_here"))

    async def _hash(self, seat: int) -> None:
        call = self._call()
        if call is not None:
            if self._ringing_in():
                await self._submit(AnswerCall(seat, accept=False))
            else:
                await self._submit(HangUp(seat))
            return
        await self._nobody(seat)

    async def _star(self, seat: int, token: Star) -> None:
        body = token.body
        if token.end == "*":
            await self._submit(ToggleCallMode(seat))
        elif body == "":
            await self._submit(Interject(seat))
        elif body == "0":
            await self._submit(HangUp(seat))
        elif body.startswith("0") and body[1:].isdigit():
            await self._submit(PlaceCall(seat, int(body[1:])))
        elif body.lstrip("*").isdigit():
            await self._day_action(seat, int(body.lstrip("*")))
        else:
            self._not_here()

    async def _nobody(self, seat: int) -> None:
        options = [
            c
            for c in self.legal()
            if (isinstance(c, Vote) and c.target is None)
            or (isinstance(c, UseAbility) and c.target is None)
        ]
        if not options:
            self.s.refuse(self.s.t("phone.game.no_nobody"))
            return
        await self._submit_one_of(options)

    async def _target(self, seat: int, house: int) -> None:
        legal = self.legal()
        options: list[Command] = [
            c
            for c in legal
            if (isinstance(c, UseAbility) and c.kind not in DAY_KINDS and c.target == house)
            or (isinstance(c, Nominate | Vote) and c.target == house)
        ]
        if options:
            await self._submit_one_of(options)
            return
        # Nothing legal: ask the engine anyway, so the caller hears its exact reason.
        state = self.actor.state
        phase = state.phase if state is not None else None
        probe: Command | None = None
        if phase is Phase.DAY:
            probe = Nominate(seat, house)
        elif phase is Phase.VOTE:
            probe = Vote(seat, house)
        elif phase is Phase.NIGHT:
            # Prefer an ability usable on someone tonight (the witch's poison before a heal
            # that waits for the victim), so the reason spoken fits what the caller meant.
            usable = [
                c.kind for c in legal if isinstance(c, UseAbility) and c.kind not in DAY_KINDS
            ]
            kinds = usable or self._own_kinds(night=True)
            probe = UseAbility(seat, kinds[0], house) if kinds else None
        if probe is None:
            self.s.refuse(self.s.t("phone.game.no_action"))
            return
        await self._submit(probe)

    async def _day_action(self, seat: int, house: int) -> None:
        options: list[Command] = [
            c
            for c in self.legal()
            if isinstance(c, UseAbility) and c.kind in DAY_KINDS and c.target == house
        ]
        if options:
            await self._submit_one_of(options)
            return
        usable = [c.kind for c in self.legal() if isinstance(c, UseAbility) and c.kind in DAY_KINDS]
        kinds = usable or self._own_kinds(night=False)
        if not kinds:
            self.s.refuse(self.s.t("phone.game.no_day_action"))
            return
        await self._submit(UseAbility(seat, kinds[0], house))

    def _own_kinds(self, *, night: bool) -> list[ActionKind]:
        me = self._me()
        if me is None:
            return []
        role = spec(RoleId(str(me.get("role"))))
        return [
            a.kind
            for a in role.abilities
            if (a.kind in DAY_KINDS) != night and a.kind is not ActionKind.STEAL
        ] or [a.kind for a in role.abilities if (a.kind in DAY_KINDS) != night]

    # choosing among several commands for one key (the witch's heal or poison on one house)
    def _choice_text(self) -> str:
        items = []
        for i, cmd in enumerate(self._choice, start=1):
            items.append(self.s.t("phone.choose_item", n=i, action=self._describe(cmd)))
        return self.s.t("phone.choose", list="; ".join(items))

    def _describe(self, cmd: Command) -> str:
        if isinstance(cmd, UseAbility):
            return self.s.t(f"action.{cmd.kind.value}", self.world)
        if isinstance(cmd, Vote):
            return self.s.t("ui.abstain") if cmd.target is None else self.s.t("phase.vote")
        return self.s.t("phase.day")

    async def _submit_one_of(self, options: Sequence[Command]) -> None:
        if len(options) == 1:
            await self._submit(options[0])
            return
        self._choice = list(options)
        self.s.say(self._choice_text())

    async def _pick(self, token: Token) -> None:
        key = token.key if isinstance(token, Single) else getattr(token, "digits", "")
        options, self._choice = self._choice, []
        if key.isdigit() and 1 <= int(key) <= len(options):
            await self._submit(options[int(key) - 1])
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
                self.s.say(self.s.t("phone.game.leave_confirm"))
        else:
            self._not_here()

    def _status(self) -> list[str]:
        view = self._view()
        phase = self.s.t(f"phase.{view['phase']}")
        lines = [self.s.t("phone.game.status", phase=phase, round=view["round"])]
        me = self._me()
        if me is not None:
            role = self.world.role_name(str(me["role"]), self.s.lang)
            lines.append(self.s.t("phone.game.status_role", role=role, n=self.seat))
            if not me.get("alive", True):
                lines.append(self.s.t("phone.game.status_dead"))
            call = self._call()
            if call is not None:
                other = self.s.t("fmt.seat", n=call.get("with"))
                if call.get("status") == "active":
                    key = "phone.game.status_call"
                elif call.get("incoming"):
                    key = "phone.game.status_ringing_in"
                else:
                    key = "phone.game.status_ringing_out"
                lines.append(self.s.t(key, seat=other))
        return lines + self.can_lines()

    def _who_lives(self) -> list[str]:
        seats = self._view()["seats"]
        alive = [s["seat"] for s in seats if s["alive"]]
        dead = [s for s in seats if not s["alive"]]
        lines = [self.s.t("phone.game.alive", list=self._seats_text(alive))]
        if dead:
            items = [
                self.s.t(
                    "fmt.death",
                    seat=self.s.t("fmt.seat", n=s["seat"]),
                    role=self.world.role_name(str(s["role"]), self.s.lang)
                    if s.get("role")
                    else self.s.t("fmt.unknown"),
                )
                for s in dead
            ]
            lines.append(self.s.t("phone.game.dead_list", list="; ".join(items)))
        return lines

    def _role_lines(self) -> list[str]:
        me = self._me()
        if me is None:
            return [self.s.t("phone.game.spectator_keys")]
        role = str(me["role"])
        return [
            self.s.t(
                "phone.game.status_role",
                role=self.world.role_name(role, self.s.lang),
                n=self.seat,
            ),
            role_explanation(role, self.s.lang, self.world),
        ]

    async def _leave_answer(self, token: Token) -> None:
        key = token.key if isinstance(token, Single) else getattr(token, "digits", "")
        self._confirm_leave = False
        if key == "1" and self.seat is not None:
            await self._submit(Leave(self.seat))
            await self._back_to_menu("phone.game.leaving")
        elif key == "2":
            self.s.say(self.s.t("phone.game.stay"), remember=False)
        else:
            self._confirm_leave = True
            self.s.say(self.s.t("phone.game.leave_confirm"), remember=False)

    async def _operator(self, rest: str) -> None:
        from vollmond.phone.session.session import OperatorCall  # noqa: PLC0415

        reason: int | None = None
        player: int | None = None
        if rest:
            if not rest.isdigit() or rest[0] not in "1234":
                self.s.say(self.s.t("phone.operator_bad_reason"), remember=False)
                return
            reason = int(rest[0])
            player = int(rest[1:]) if rest[1:] else None
        call = OperatorCall(self.game_id, self.seat, reason, player, self.s.clock())
        self.s.report_operator(call)
        if self.s.enforcer is not None:
            await self._raise_alarm(reason, player)
        elif reason is not None and player is not None:
            seat = self.s.t("fmt.seat", n=player)
            self.s.say(self.s.t("phone.operator_called_about", reason=reason, seat=seat))
        else:
            self.s.say(self.s.t("phone.operator_called"))
        if not rest and any(
            isinstance(c, UseAbility) and c.kind in DAY_KINDS and c.target == 9
            for c in self.legal()
        ):
            self.s.say(self.s.t("phone.game.house_nine"), remember=False)

    async def _raise_alarm(self, reason: int | None, player: int | None) -> None:
        """O1: the alarm goes into the moderation queue; the caller hears the confirmation or,
        past the misuse limit, when a call is possible again. Spectators and dead players
        may call too (they see and hear the table)."""
        assert self.s.enforcer is not None
        state = self.actor.state
        if player is not None and (state is None or not state.has_seat(player)):
            player = None  # an unknown house is not an accusation; the call still counts
        person = self.s.person
        result = await self.s.enforcer.raise_alarm(
            self.game_id,
            person=person,
            house=self.seat,
            reason=reason,
            accused=player,
            lang=self.s.lang,
        )
        self.s.say(result.message, remember=False)

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
    async def _submit(self, command: Command) -> None:
        try:
            outcome = await self.s.hub.submit(self.game_id, command)
        except (LobbyError, GameClosedError):
            self.s.say(self.s.t("phone.lobby.not_running"), remember=False)
            return
        if isinstance(outcome, Rejection):
            self.s.refuse(render_rejection(outcome, self.s.lang, self.world))
