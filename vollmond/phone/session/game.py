"""A caller in a game of a rule set with calls between houses (`HasCalls`, the standard rules):
narration of what the viewer may know, and keys mapped to the rule set's commands.

What every game line does (following the actor, the late joiner's catch-up, the info keys,
leaving, the moderators) is `line.GameLineBase`. This line adds the telephone of the game:
the ring and the ringback, ``1``/``2`` while it rings, ``#`` to hang up, ``*0NN#`` to call,
``*0*`` to half listen; day actions with ``*NN#``; interjections with ``*#``; each night the
caller's own turn first and then the night walk (``RuleSet.night_walk``, from the deck's
public composition). The rule set says which entries give which legal command (its keypad,
with offers named as `HasCalls` says); this line names each ability by the world's name of
its action and knows no rule set's commands.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

from vollmond.engine.core import Event
from vollmond.engine.ruleset import HasCalls, Key, KeyAction, Press
from vollmond.i18n import role_explanation
from vollmond.i18n.render import load_catalogue
from vollmond.phone.session.keys import Entry, Hash, Single, Star, Token
from vollmond.phone.session.line import PHASE, ROLE, GameLineBase
from vollmond.phone.session.prompts import Line, Priority, tones

if TYPE_CHECKING:
    from vollmond.phone.session.session import PhoneSession
    from vollmond.service.actor import GameActor

MAX_REMINDERS: Final = 3
"""Silence reminders per phase in a game (a caller may just be listening)."""

REMIND_IN: Final = frozenset({"night", "vote"})
"""Phases with a silence reminder: the night's action and the vote. Not by day or in the
morning, when the market place talks and a prompt would be spoken over it."""

URGENT: Final = Priority.URGENT
NEWS: Final = Priority.NEWS

TURN: Final = "turn"
"""The tag of a turn's prompt (the phase's start, the caller's keys, the time left): urgent
while its phase runs, withdrawn when the next phase begins (it would be wrong by then)."""

NIGHT: Final = "night"
DAY: Final = "day"
"""An ability's offer is ``night.<action>`` or ``day.<action>`` (`HasCalls`)."""

OTHER_OFFERS: Final = (
    ("answer", "phone.can.answer"),
    ("hang_up", "phone.can.hang_up"),
    ("toggle", "phone.can.toggle"),
    ("call", "phone.can.call"),
    ("interject", "phone.can.interject"),
)
"""The call keys and the interjection, in the order they are said (after nominate, vote)."""

REFUSED: Final = MappingProxyType(
    {Key.NOBODY: "phone.game.no_nobody", Key.DAY_HOUSE: "phone.game.no_day_action"}
)
"""What is said when an entry means nothing now (the rules have no command to refuse)."""

OPENING: Final = frozenset({"game_started"})
"""Events whose narration opens the game and is past once the first phase is over."""

ROLE_CODES: Final = frozenset({"role_assigned"})
"""Events that tell the caller their role (with its explanation)."""

RING: Final = "ring"
"""The tag of what is said while a phone rings: withdrawn, if unheard, when the ring ends."""

RING_ENDS: Final = frozenset(
    {"call_connected", "call_declined", "call_missed", "call_ended", "call_busy", "seance_opened"}
)
"""Events after which no phone of this caller rings any more."""


def has_calls(ruleset: object) -> bool:
    """Whether a rule set is played through this line."""
    return isinstance(ruleset, HasCalls)


def _ability(action: KeyAction) -> tuple[str, str] | None:
    """``(time, action)`` of an ability's offer, None for any other offer."""
    time, _, kind = action.offer.partition(".")
    return (time, kind) if kind and time in (NIGHT, DAY) else None


def _target(action: KeyAction) -> int | None:
    return action.presses[0].number


class GameLine(GameLineBase):
    PHASE_CODES = frozenset({"phase_started"})
    START_CODES = frozenset(
        {"game_started", "role_assigned", "team_revealed", "partner_revealed", "role_taken"}
    )

    def __init__(self, session: PhoneSession, actor: GameActor, seat: int | None) -> None:
        super().__init__(session, actor, seat)
        assert isinstance(actor.ruleset, HasCalls)
        self.calls: HasCalls = actor.ruleset
        self.composition: dict[str, int] = {}
        self._reminded_in = -1
        self._reminders = 0

    def t(self, key: str, **params: Any) -> str:
        return self.s.t(key, **params)

    def tw(self, key: str, **params: Any) -> str:
        """A text in the world's names (an action, a night step)."""
        return self.s.t(key, self.world, **params)

    # -- following the game ----------------------------------------------------------------
    def _read(self, event: Event) -> None:
        if event.code == "game_started":
            self._learn_composition(event)

    def state_changed(
        self, state: Any, phase_changed: bool, *, view_unchanged: bool = False
    ) -> None:
        if self.actor.ruleset.is_over(state):
            self._game_over()
            return
        if self._alive and self.seat is not None and not self._seat_alive():
            self._alive = False
            self._choice = []
            self._confirm_leave = False
            self.s.say(self.t("phone.game.dead"), priority=URGENT)

    # -- narration -------------------------------------------------------------------------
    def _learn_composition(self, event: Event) -> None:
        raw = event.params.get("composition")
        if isinstance(raw, Mapping):
            self.composition = {str(k): int(v) for k, v in raw.items() if isinstance(v, int)}

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
            # The ring is over: its tones and, if unheard, its words ("ruft dich an", "es
            # klingelt") are past; what became of the call is said next.
            self.s.prompts.stop_tone("ringing", "incoming_ring")
            self.s.prompts.withdraw(RING)
        if code == "call_incoming":
            # An alert: the ring first (audio at once, nothing to render), then who calls and
            # the keys; it goes before whatever the callee was hearing and cuts menus and help.
            self.s.tone("incoming_ring", tones.incoming_ring(1), priority=Priority.ALERT)
            say(self._render(event), self.t("phone.can.answer"), priority=Priority.ALERT, tag=RING)
            cycles = self._ring_cycles(1.8) - 1
            if cycles > 0:
                self.s.tone("incoming_ring", tones.incoming_ring(cycles))
            return
        if code == "call_outgoing":
            say(self._render(event), priority=NEWS, tag=RING)
            self.s.tone("ringing", tones.ringing(self._ring_cycles(5.0)))
            return
        if code == "call_busy":
            self.s.tone("busy", tones.busy(), priority=NEWS)
            say(self._render(event), priority=NEWS)
            return
        if code == "call_declined" and params.get("callee") == self.seat:
            say(self.t("phone.game.you_declined"), priority=NEWS)
            return
        priority = URGENT if code == "game_over" else NEWS
        # The welcome belongs to the first phase; the role is shortened when it is late.
        tag = PHASE if code in OPENING else ROLE if code in ROLE_CODES else None
        say(self._render(event), priority=priority, remember=code != "chat", tag=tag)
        if code == "game_over":
            self._game_over()

    def _phase_started(self, event: Event) -> None:
        """A new phase: for a living player who acts in it this is their turn (urgent: the
        phase, their keys and the time left come first); the night walk follows, short and cut
        by any key. The previous turn's prompt and phase news, if still unheard, are withdrawn:
        its keys and time are past, and it would hold back every urgent prompt after it."""
        params = event.params
        self._phase_begins(params)
        self.s.prompts.withdraw(TURN)
        night = params.get("phase") == NIGHT and params.get("step") != "steal"
        own = self._night_turn() if night else []
        # At night only those with a step of their own have a turn; for the others the
        # night's start is game news.
        turn = self._alive and self.seat is not None and not night
        if own:
            # Whoever acts tonight hears a short start, their keys and the time left (which
            # replaces the narrator's "ihr habt 2 Minuten"), so they can act within seconds.
            start = self.t("phone.night.start", round=params.get("round"))
            self.s.say(start, *own, priority=URGENT, tag=TURN)
        elif turn:
            self.s.say(self._render(event), priority=URGENT, tag=TURN)
        else:
            self.s.say(self._render(event), priority=NEWS, tag=PHASE)
        if night:
            self._night_walk()
        elif self._alive:
            self._own_turn(always=params.get("phase") != NIGHT)

    def _night_turn(self) -> list[Line]:
        """The caller's own night instructions, if their role has a step tonight."""
        me = self._me()
        my_role = me.get("role") if me is not None and self._alive else None
        if my_role not in self.actor.ruleset.night_walk(self.composition):
            return []
        lines = self._ability_lines(self._actions(), night=True)
        if not lines:
            return []
        return [self.t("phone.night.your_turn"), *lines, *self._time_left()]

    def _ring_cycles(self, cycle_s: float) -> int:
        """Ring as long as the game lets a call ring (a public founding option); an answer,
        a refusal or the end of the ringing stops the tone earlier."""
        ring_s = self.calls.ring_seconds(self.actor.options)
        return max(1, round(ring_s / cycle_s))

    def _night_walk(self) -> None:
        """After the caller's own instructions (urgent, :meth:`_night_turn`), every night role
        of the deck in a fixed order, dead or alive (timing reveals nothing), one short line
        each. The walk is the same on every line; a key cuts it short on this line only."""
        names = load_catalogue(self.s.lang)
        steps = self.actor.ruleset.night_walk(self.composition)
        if self._alive:
            others = self._other_lines(self._actions())
            if others:
                self.s.say(*others, priority=NEWS, tag=PHASE)
        if self.s.expert:
            return
        for key in steps:
            step = f"phone.night.step.{key}"
            line = self.tw(step if step in names else "phone.night.step.other")
            self.s.say(line, remember=False, tag=PHASE)

    def _own_turn(self, *, always: bool) -> None:
        lines = self.can_lines()
        if lines and (always or self._ability_lines(self._actions(), night=True)):
            self.s.say(*lines, *self._time_left(), priority=URGENT, tag=TURN)

    # -- what the caller may know ----------------------------------------------------------
    def _me(self) -> dict[str, Any] | None:
        if self.seat is None or self.actor.state is None:
            return None
        me = self._view().get("me")
        return me if isinstance(me, dict) else None

    def _call(self) -> dict[str, Any] | None:
        me = self._me()
        call = me.get("call") if me is not None else None
        return call if isinstance(call, dict) else None

    def _ringing_in(self) -> bool:
        call = self._call()
        return call is not None and call.get("status") == "ringing" and bool(call.get("incoming"))

    # -- what the caller can do (spoken) ---------------------------------------------------
    def _ability_lines(self, actions: Sequence[KeyAction], *, night: bool) -> list[str]:
        kinds: dict[str, list[int | None]] = {}
        for action in actions:
            ability = _ability(action)
            if ability is not None and (ability[0] == NIGHT) == night:
                kinds.setdefault(ability[1], []).append(_target(action))
        lines = []
        for kind, targets in kinds.items():
            houses = [t for t in targets if t is not None]
            name = self.tw(f"action.{kind}")
            key = "phone.can.ability" if night else "phone.can.day_ability"
            if houses:
                lines.append(self.tw(key, action=name, targets=self._seats_text(houses)))
            if None in targets:
                lines.append(self.t("phone.can.ability_nobody"))
        return lines

    def _votes(self, actions: Sequence[KeyAction]) -> list[int]:
        return [n for a in actions if a.offer == "vote" and (n := _target(a)) is not None]

    def _other_lines(self, actions: Sequence[KeyAction]) -> list[str]:
        offers = {a.offer for a in actions}
        lines = self._ability_lines(actions, night=False)
        if "nominate" in offers:
            lines.append(self.t("phone.can.nominate"))
        votes = self._votes(actions)
        if votes:
            lines.append(self.t("phone.can.vote", targets=self._seats_text(votes)))
        lines.extend(self.t(key) for offer, key in OTHER_OFFERS if offer in offers)
        return lines

    def _can_lines(self, actions: Sequence[KeyAction]) -> list[str]:
        return self._ability_lines(actions, night=True) + self._other_lines(actions)

    # -- Mode ------------------------------------------------------------------------------
    def _yes_or_no(self) -> bool:
        return self._ringing_in()

    def hash_immediate(self) -> bool:
        return self._call() is not None

    def reminder(self) -> Sequence[Line] | None:
        """After a silence: what the caller still has to do in this phase and the time left
        (at most `MAX_REMINDERS` times a phase); nothing when there is nothing to do."""
        if self._confirm_leave or self._choice:
            return self.help()
        state = self.actor.state
        if state is None or not self._alive or self.seat is None:
            return None
        rules = self.actor.ruleset
        phase = rules.phase_name(state)
        if phase not in REMIND_IN or self._call() is not None:
            return None  # by day people talk; in a call the caller is busy
        seq = rules.phase_seq(state)
        if self._reminded_in == seq and self._reminders >= MAX_REMINDERS:
            return None
        actions = self._actions()
        lines: list[Line] = [*self._ability_lines(actions, night=phase == NIGHT)]
        votes = self._votes(actions)
        if votes:
            lines.append(self.t("phone.can.vote", targets=self._seats_text(votes)))
        if not lines:
            return None
        if self._reminded_in != seq:
            self._reminded_in, self._reminders = seq, 0
        self._reminders += 1
        return lines + self._time_left()

    async def _keys(self, token: Token) -> None:
        if self.seat is None or not self._alive:
            key = "phone.game.spectator_keys" if self.seat is None else "phone.game.dead_keys"
            self.s.say(self.t(key), remember=False)
            return
        press = self._press(token)
        if press is None:
            self._not_here()
            return
        await self._enter(self.seat, press)

    def _press(self, token: Token) -> Press | None:
        """The entry a token is here (docs/phone-keys.md, "In a game")."""
        if isinstance(token, Single | Entry) and self._ringing_in():
            answer = token.key if isinstance(token, Single) else token.digits
            if answer in ("1", "2"):
                return Press(Key.YES if answer == "1" else Key.NO)
        if isinstance(token, Entry):
            return Press(Key.NOBODY) if token.number == 0 else Press(Key.HOUSE, token.number)
        if isinstance(token, Hash):
            if self._call() is None:
                return Press(Key.NOBODY)
            return Press(Key.NO if self._ringing_in() else Key.HANG_UP)
        if isinstance(token, Star):
            body = token.body
            if token.end == "*":
                return Press(Key.TOGGLE)
            if body == "":
                return Press(Key.DONE)
            if body == "0":
                return Press(Key.HANG_UP)
            if body.startswith("0") and body[1:].isdigit():
                return Press(Key.CALL, int(body[1:]))
            if body.lstrip("*").isdigit():
                return Press(Key.DAY_HOUSE, int(body.lstrip("*")))
        return None

    async def _enter(self, seat: int, press: Press) -> None:
        """The legal commands the entry gives (one, or a choice); else the command it would
        mean, for the rules to refuse with their reason."""
        options = [a for a in self._actions() if a.presses == (press,)]
        if options:
            await self._submit_one_of(options)
            return
        state = self.actor.state
        probe = self.calls.key_probe(state, seat, (press,)) if state is not None else None
        if probe is None:
            self.s.refuse(self.t(REFUSED.get(press.key, "phone.game.no_action")))
            return
        await self._submit(probe)

    def _describe(self, action: KeyAction) -> str:
        ability = _ability(action)
        if ability is not None:
            return self.tw(f"action.{ability[1]}")
        if action.offer == "abstain":
            return self.t("ui.abstain")
        if action.offer == "vote":
            return self.t("phase.vote")
        return self.t("phase.day")

    def _after_operator(self, rest: str) -> None:
        if not rest and any(a.presses == (Press(Key.DAY_HOUSE, 9),) for a in self._actions()):
            self.s.say(self.t("phone.game.house_nine"), remember=False)

    # -- info keys -------------------------------------------------------------------------
    def _status(self) -> list[str]:
        view = self._view()
        phase = self.t(f"phase.{view['phase']}")
        lines = [self.t("phone.game.status", phase=phase, round=view["round"])]
        me = self._me()
        if me is not None:
            role = self.world.role_name(str(me["role"]), self.s.lang)
            lines.append(self.t("phone.game.status_role", role=role, n=self.seat))
            if not me.get("alive", True):
                lines.append(self.t("phone.game.status_dead"))
            call = self._call()
            if call is not None:
                other = self.t("fmt.seat", n=call.get("with"))
                if call.get("status") == "active":
                    key = "phone.game.status_call"
                elif call.get("incoming"):
                    key = "phone.game.status_ringing_in"
                else:
                    key = "phone.game.status_ringing_out"
                lines.append(self.t(key, seat=other))
        return lines + self.can_lines()

    def _role_lines(self) -> list[str]:
        me = self._me()
        if me is None:
            return [self.t("phone.game.spectator_keys")]
        role = str(me["role"])
        return [
            self.t(
                "phone.game.status_role",
                role=self.world.role_name(role, self.s.lang),
                n=self.seat,
            ),
            role_explanation(role, self.s.lang, self.world),
        ]
