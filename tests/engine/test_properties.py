"""Properties of whole bot games over random founding options (DESIGN §5).

Hypothesis founds games in every world, with every deck (auto, the six fixed decks, custom
decks with random role counts), 4 to 40 players, einstimmig / Sofort-Mord / lovers on or off
and calls off, by night or also by day, and lets `engine.standard.sim.play_game` play them out with
bots of random temperament. For every game:

- it ends (phase OVER, outcome set) within a bound of rounds and commands;
- replaying the recorded command log reproduces the final state (==) and every event;
- after every accepted command, no seat's view and no seat's visible events hold a secret
  the seat may not know, spectators and operators get public events only, and routing never
  lets anyone hear a room they are not in. The secrecy model below is written from the rules
  (RULES.md, docs/decisions.md), not from `view.known_roles`, so the two check each other.

A second property throws random, mostly illegal commands at states reached in such games: a
refused command leaves the state passed in untouched, `validate` agrees with `apply`, and
commands the rules plainly forbid (independent oracle `must_refuse`) are refused.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.engine.driver import states_along
from vollmond.engine.core import AudienceKind, Event, Rejection, Viewer, ViewerKind
from vollmond.engine.standard import (
    ActionKind,
    AnswerCall,
    CallSettings,
    CallTimeout,
    Command,
    DayCallModes,
    DeckId,
    FloorTimeout,
    GameOptions,
    GameState,
    HangUp,
    Interject,
    InvalidOptionsError,
    Nominate,
    Phase,
    PhaseTimeout,
    PlaceCall,
    RoleId,
    Say,
    ToggleCallMode,
    UseAbility,
    Vote,
    apply,
    new_game,
    validate,
)
from vollmond.engine.standard.bots import Temperament
from vollmond.engine.standard.codes import Ev
from vollmond.engine.standard.commands import Leave
from vollmond.engine.standard.legal import legal_actions
from vollmond.engine.standard.options import MAX_CHAT_CHARS
from vollmond.engine.standard.properties import has_trait, night_room, seen_as_evil, spec_of
from vollmond.engine.standard.replay import replay, rng_for
from vollmond.engine.standard.routing import SPECTATORS, routing
from vollmond.engine.standard.sim import MAX_ROUNDS_PER_PHASE, play_game
from vollmond.engine.standard.state import Player
from vollmond.engine.standard.types import CallStatus, NightStep, Side, Trait
from vollmond.engine.standard.view import view, visible_events
from vollmond.worlds import world_ids

# --- founding options and bots -----------------------------------------------------------------


@st.composite
def foundings(draw: st.DrawFn, min_players: int = 4, max_players: int = 16) -> GameOptions:
    deck = draw(st.sampled_from(list(DeckId)))
    custom: tuple[tuple[RoleId, int], ...] = ()
    if deck is DeckId.CUSTOM:
        entries = st.tuples(st.sampled_from(list(RoleId)), st.integers(0, 4))
        custom = tuple(
            draw(
                st.lists(entries, min_size=1, max_size=8).filter(
                    lambda xs: any(n > 0 for _, n in xs)
                )
            )
        )
    calls = draw(st.sampled_from(("off", "night", "by_day")))
    return GameOptions(
        players=draw(st.integers(min_players, max_players)),
        world=draw(st.sampled_from(world_ids())),
        deck=deck,
        custom_roles=custom,
        lovers=draw(st.sampled_from((None, True, False))),
        unanimous=draw(st.booleans()),
        instant_kill=draw(st.booleans()),
        calls=CallSettings(
            enabled=calls != "off",
            by_day=calls == "by_day",
            day_modes=draw(st.sampled_from(list(DayCallModes))),
            evil_may_call=draw(st.booleans()),
            per_night=draw(st.integers(1, 3)),
        ),
    )


@st.composite
def temperaments(draw: st.DrawFn) -> Temperament:
    """The default bot, or a restless one that calls, interjects and hangs up a lot."""
    if draw(st.booleans()):
        return Temperament()
    return Temperament(
        ability=draw(st.sampled_from((0.9, 0.5))),
        keenness={
            "nominate": draw(st.sampled_from((0.35, 0.8))),
            "vote": draw(st.sampled_from((1.0, 0.6))),
            "interject": draw(st.sampled_from((0.03, 0.4))),
            "call": draw(st.sampled_from((0.05, 0.5))),
            "answer": draw(st.sampled_from((1.0, 0.5))),
            "hang_up": draw(st.sampled_from((0.4, 0.1))),
            "toggle": draw(st.sampled_from((0.1, 0.6))),
        },
    )


seeds = st.integers(0, 1_000_000)
VIEW_EVERY_STEP_UP_TO = 16
"""Views list each seat's legal actions; beyond this size they are checked per phase change."""


def round_bound(options: GameOptions) -> int:
    """Every death may be followed by fewer than `stalemate_rounds` quiet rounds."""
    return (options.players + 1) * (options.stalemate_rounds + 1) + 1


def command_bound(options: GameOptions) -> int:
    """Per phase: at most MAX_ROUNDS_PER_PHASE bot commands per seat, one timer for each,
    and the phase timer; at most five phases per round (steal, night, morning, day, vote)."""
    per_phase = 2 * MAX_ROUNDS_PER_PHASE * options.players + 1
    return round_bound(options) * 5 * per_phase


# --- the secrecy model --------------------------------------------------------------------------

PLAYER_LEFT = Ev.PLAYER_LEFT  # a seat abandoned for good: revealed like a death
PUBLIC_CODES = frozenset(
    {
        Ev.GAME_STARTED,
        Ev.PHASE_STARTED,
        Ev.MORNING_REPORT,
        Ev.SHOT_FIRED,
        Ev.INSTANT_KILL,
        Ev.NOMINATED,
        Ev.NO_NOMINATIONS,
        Ev.VOTING_STARTED,
        Ev.VOTE_CAST,
        Ev.VOTE_RESULT,
        Ev.INTERJECTION,
        Ev.FLOOR_RELEASED,
        Ev.GAME_OVER,
        PLAYER_LEFT,
    }
)
CALL_CODES = frozenset(
    {
        Ev.CALL_OUTGOING,
        Ev.CALL_INCOMING,
        Ev.CALL_CONNECTED,
        Ev.CALL_DECLINED,
        Ev.CALL_MISSED,
        Ev.CALL_ENDED,
        Ev.CALL_MODE_CHANGED,
    }
)
DEATH_CODES = frozenset(
    {Ev.MORNING_REPORT, Ev.SHOT_FIRED, Ev.INSTANT_KILL, Ev.VOTE_RESULT, PLAYER_LEFT}
)
OWN_ROLE_CODES = frozenset({Ev.ROLE_ASSIGNED, Ev.ROLE_TAKEN, Ev.ROLE_STOLEN})
NIGHT_ROOM_CODES = frozenset(
    {Ev.TEAM_REVEALED, Ev.TEAM_CHANGED, Ev.EVIL_VOTE_CAST, Ev.EVIL_VOTES_COMPLETE}
)


def may_know_role(state: GameState, viewer: Viewer, seat: int) -> bool:
    """A seat's role is known to: everyone once revealed (death, princess) or at the end;
    the seat itself; the night room's members among each other; a twin to the other twin."""
    target = state.player(seat)
    if state.phase is Phase.OVER or target.revealed:
        return True
    if viewer.kind is not ViewerKind.PLAYER or viewer.seat is None:
        return False
    if viewer.seat == seat:
        return True
    me = state.player(viewer.seat)
    if spec_of(me).night_room and spec_of(target).night_room:
        return True
    return has_trait(me, Trait.BONDED_PAIR) and target.role is me.role


def role_claims(event: Event) -> list[tuple[int, str]]:
    """(seat, role) pairs a public event states."""
    params: dict[str, Any] = dict(event.params)
    claims: list[tuple[int, str]] = []
    if event.code in DEATH_CODES:
        claims += [(dead["seat"], dead["role"]) for dead in params["dead"]]
    if event.code == Ev.VOTE_RESULT and params["banished"] is not None:
        claims.append((params["banished"], params["role"]))
    if event.code == Ev.GAME_OVER:
        claims += [(int(seat), role) for seat, role in params["roles"].items()]
    return claims


def active_call_partners(state: GameState, seat: int) -> set[int]:
    return {c.other(seat) for c in state.calls if c.has(seat) and c.status is CallStatus.ACTIVE}


def in_active_call(state: GameState) -> set[int]:
    return {s for c in state.calls if c.status is CallStatus.ACTIVE for s in (c.caller, c.callee)}


def call_participants(before: GameState, after: GameState, call_id: int) -> set[int]:
    for call in (*before.calls, *after.calls):
        if call.id == call_id:
            return {call.caller, call.callee}
    raise AssertionError(f"event names call {call_id}, which neither state knows")


def _fail(what: str, viewer: Viewer, event: Event, command: Command | None) -> str:
    return f"{what}: {viewer} got {event.code} {dict(event.params)} after {command!r}"


@dataclass(frozen=True, slots=True)
class Received:
    """One event as one seated player receives it, with the command that caused it."""

    before: GameState
    command: Command | None
    after: GameState
    seat: int
    event: Event

    @property
    def me(self) -> Player:
        return self.after.player(self.seat)

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.event.params)

    @property
    def to(self) -> frozenset[int]:
        return self.event.audience.seats

    @property
    def msg(self) -> str:
        return _fail("secret leaked", Viewer.player(self.seat), self.event, self.command)


def _public(r: Received) -> None:
    assert r.event.audience.kind is AudienceKind.PUBLIC, r.msg


def _own_role(r: Received) -> None:
    assert r.to == {r.seat} and r.params["role"] == r.me.role.value, r.msg


def _night_room(r: Received) -> None:
    room = night_room(r.after)
    assert r.seat in room and r.to == room, r.msg
    if r.event.code in (Ev.TEAM_REVEALED, Ev.TEAM_CHANGED):
        assert set(r.params["members"]) == room, r.msg
    if r.event.code == Ev.EVIL_VOTE_CAST:
        assert r.params["voter"] in room, r.msg


def _partners(r: Received) -> None:
    seats = set(r.params["seats"])
    assert r.seat in seats and r.to == seats, r.msg
    if r.params["kind"] == "twin":
        twins = {
            p.seat
            for p in r.after.players
            if has_trait(p, Trait.BONDED_PAIR) and p.role is r.me.role
        }
        assert seats == twins, r.msg
    else:
        assert seats == {p.seat for p in r.after.players if p.lover}, r.msg


def _witch_victim(r: Received) -> None:
    """N7: only a living witch, only once every living evil player has voted."""
    assert r.me.alive and spec_of(r.me).ability(ActionKind.HEAL) is not None, r.msg
    night = r.after.night
    assert night is not None and night.victim_locked, r.msg
    assert night_room(r.after) <= night.evil_votes.keys(), r.msg


def _check_result(r: Received) -> None:
    cmd = r.command
    assert isinstance(cmd, UseAbility) and cmd.kind is ActionKind.CHECK, r.msg
    assert cmd.actor == r.seat and r.to == {r.seat}, r.msg
    assert r.params["target"] == cmd.target, r.msg
    assert r.params["evil"] == seen_as_evil(r.after.player(r.params["target"])), r.msg


def _medium_result(r: Received) -> None:
    assert r.me.alive and has_trait(r.me, Trait.LEARNS_BANISHED), r.msg
    assert r.to == {r.seat} and r.params["target"] == r.after.last_banished, r.msg


def _action_confirmed(r: Received) -> None:
    assert isinstance(r.command, UseAbility) and r.command.actor == r.seat, r.msg
    assert r.to == {r.seat}, r.msg


def _vote_transferred(r: Received) -> None:
    cmd = r.command
    assert isinstance(cmd, UseAbility) and cmd.kind is ActionKind.TRANSFER_VOTE, r.msg
    assert r.to == {cmd.actor, cmd.target}, r.msg


def _call_busy(r: Received) -> None:
    assert isinstance(r.command, PlaceCall) and r.command.actor == r.seat, r.msg
    assert r.to == {r.seat}, r.msg


def _call(r: Received) -> None:
    participants = call_participants(r.before, r.after, r.params["call"])
    assert r.seat in participants and r.to <= participants, r.msg


def _seance(r: Received) -> None:
    cmd = r.command
    assert isinstance(cmd, UseAbility) and cmd.kind is ActionKind.SEANCE, r.msg
    assert r.to == {cmd.actor, r.params["dead"]}, r.msg


def _chat(r: Received) -> None:
    room = r.params["room"]
    speaker = r.params["seat"]
    before = r.before
    if room == "market":
        assert r.event.audience.kind is AudienceKind.PUBLIC, r.msg
        assert before.phase is not Phase.NIGHT, r.msg
    elif room == "night_room":
        assert before.phase is Phase.NIGHT, r.msg
        assert r.seat in night_room(before) and speaker in night_room(before), r.msg
    elif room == "out":  # the dead among themselves (D6): never a living ear
        assert not before.player(speaker).alive and not before.player(r.seat).alive, r.msg
    else:
        assert room == "call", r.msg
        assert r.seat == speaker or r.seat in active_call_partners(before, speaker), r.msg


SECRECY_RULES: dict[str, Callable[[Received], None]] = {
    **dict.fromkeys(PUBLIC_CODES, _public),
    **dict.fromkeys(OWN_ROLE_CODES, _own_role),
    **dict.fromkeys(NIGHT_ROOM_CODES, _night_room),
    **dict.fromkeys(CALL_CODES, _call),
    Ev.PARTNER_REVEALED: _partners,
    Ev.WITCH_VICTIM: _witch_victim,
    Ev.CHECK_RESULT: _check_result,
    Ev.MEDIUM_RESULT: _medium_result,
    Ev.ACTION_CONFIRMED: _action_confirmed,
    Ev.VOTE_TRANSFERRED: _vote_transferred,
    Ev.CALL_BUSY: _call_busy,
    Ev.SEANCE_OPENED: _seance,
    Ev.CHAT: _chat,
}
"""Who may receive each event code. `roles_dealt` is absent on purpose: nobody may."""


def check_player_event(
    before: GameState, command: Command | None, after: GameState, seat: int, event: Event
) -> None:
    """One event a seated player receives: it must be theirs to know."""
    received = Received(before, command, after, seat, event)
    rule = SECRECY_RULES.get(event.code)
    viewer = Viewer.player(seat)
    assert rule is not None, _fail("event code without a secrecy rule", viewer, event, command)
    rule(received)
    for claimed_seat, role in role_claims(event):
        assert may_know_role(after, viewer, claimed_seat), received.msg
        assert role == after.player(claimed_seat).role.value, received.msg


def check_outsider_events(
    after: GameState, command: Command | None, viewer: Viewer, events: Sequence[Event]
) -> None:
    """Spectators and operators: public events only, and no unrevealed role in them (X6)."""
    for event in visible_events_checked(events, viewer):
        msg = _fail("private event reached an outsider", viewer, event, command)
        assert event.audience.kind is AudienceKind.PUBLIC, msg
        market_chat = event.code == Ev.CHAT and event.params["room"] == "market"
        assert event.code in PUBLIC_CODES or market_chat, msg
        for seat, role in role_claims(event):
            assert may_know_role(after, viewer, seat), msg
            assert role == after.player(seat).role.value, msg


def visible_events_checked(events: Iterable[Event], viewer: Viewer) -> list[Event]:
    """`view.visible_events`, checked against the audience rule stated independently."""
    events = list(events)
    got = visible_events(events, viewer)
    expected = [
        e
        for e in events
        if e.audience.kind is AudienceKind.PUBLIC
        or (
            e.audience.kind is AudienceKind.SEATS
            and viewer.kind is ViewerKind.PLAYER
            and viewer.seat in e.audience.seats
        )
    ]
    assert got == expected, f"visible_events for {viewer} disagrees with the audiences"
    return got


def check_view(state: GameState, viewer: Viewer) -> dict[str, Any]:
    """The view shows only roles the viewer may know, and private parts only to their owner."""
    seen: dict[str, Any] = view(state, viewer)
    over = state.phase is Phase.OVER
    me: Player | None = None
    if viewer.kind is ViewerKind.PLAYER and viewer.seat is not None:
        me = state.player(viewer.seat)
    for entry in seen["seats"]:
        seat = entry["seat"]
        where = f"{viewer} sees seat {seat} in phase {state.phase} round {state.round}"
        if entry["role"] is not None:
            assert may_know_role(state, viewer, seat), f"{where}: role {entry['role']} leaked"
            assert entry["role"] == state.player(seat).role.value, where
        if entry["lover"]:
            assert state.player(seat).lover, where
            assert over or (me is not None and me.lover), f"{where}: lovers leaked"
    day = seen["day"]
    if me is None:
        assert seen["me"] is None and seen["night_room"] is None, f"{viewer}: private parts"
        assert seen["witch_victim"] is None, f"{viewer}: witch's victim leaked"
        assert day is None or not day["my_transfers"], f"{viewer}: vote transfer leaked"
        return seen
    assert seen["seats"][me.seat - 1]["role"] == me.role.value, "a player must see their role"
    assert seen["me"]["seat"] == me.seat and seen["me"]["role"] == me.role.value
    if seen["night_room"] is not None:
        assert me.alive and spec_of(me).night_room, f"{viewer}: night room leaked"
    if seen["witch_victim"] is not None:
        assert me.alive and spec_of(me).ability(ActionKind.HEAL) is not None, f"{viewer}: N7"
        assert state.night is not None and state.night.victim_locked, f"{viewer}: N7 too early"
    if day is not None:
        for giver, to in day["my_transfers"].items():
            assert me.seat in (int(giver), to), f"{viewer}: someone else's vote transfer leaked"
    return seen


def check_routing(state: GameState) -> None:
    """Nobody hears a room they are not in; spectators hear only the market place (X6, C6)."""
    table = routing(state)
    by_day = state.phase is not Phase.NIGHT
    busy = in_active_call(state)
    market = {p.seat for p in state.players if p.alive and p.seat not in busy} if by_day else set()
    room = night_room(state) - busy
    for listener, routes in table.items():
        sources = {r.source for r in routes}
        if listener == SPECTATORS:
            assert sources <= market, f"spectators hear {sources - market} ({state.phase})"
            continue
        assert isinstance(listener, int)
        allowed = active_call_partners(state, listener) | market
        if listener in room:
            allowed |= room
        allowed.discard(listener)
        assert sources <= allowed, f"seat {listener} hears {sources - allowed} ({state.phase})"


def routing_inputs(state: GameState) -> tuple[object, ...]:
    """Everything routing reads; when none of it changed, neither did the table."""
    floor = state.day.floor if state.day is not None else None
    return (state.phase, state.calls, tuple((p.alive, p.role) for p in state.players), floor)


def check_calls(state: GameState) -> None:
    """C6: private calls only between the living (a séance is the necromancer's, with a dead)."""
    for call in state.calls:
        if call.kind.value == "call":
            assert state.player(call.caller).alive and state.player(call.callee).alive, call


def check_step(
    before: GameState,
    command: Command | None,
    after: GameState,
    events: Sequence[Event],
    *,
    views: bool,
) -> None:
    """Every secrecy check for one accepted command (or the deal, command None)."""
    for seat in range(1, len(after.players) + 1):
        viewer = Viewer.player(seat)
        for event in visible_events_checked(events, viewer):
            check_player_event(before, command, after, seat, event)
        if views:
            check_view(after, viewer)
    for outsider in (Viewer.spectator(), Viewer.operator()):
        check_outsider_events(after, command, outsider, events)
    if views:
        spectator = check_view(after, Viewer.spectator())
        assert check_view(after, Viewer.operator()) == spectator, "operators see as spectators"
    if routing_inputs(after) != routing_inputs(before) or command is None:
        check_routing(after)
    check_calls(after)
    if after.phase is not Phase.OVER:
        check_undecided(after, before, command)


def check_undecided(state: GameState, before: GameState, command: Command | None) -> None:
    """Victory is checked after every death (V1, V2): a running game just after a death
    still has living evil, and fewer of them than all other living."""
    died = command is not None and any(
        b.alive and not a.alive for b, a in zip(before.players, state.players, strict=True)
    )
    if not died:
        return
    living = [p for p in state.players if p.alive]
    evil = sum(1 for p in living if spec_of(p).counts_for_evil_majority)
    assert 0 < evil < len(living) - evil, f"game should be over after {command!r}"


def check_outcome(state: GameState) -> None:
    assert state.phase is Phase.OVER and state.outcome is not None
    living = [p for p in state.players if p.alive]
    evil = sum(1 for p in living if spec_of(p).counts_for_evil_majority)
    main = state.outcome.sides[0]
    if main is Side.VILLAGE:
        assert evil == 0
    elif main is Side.EVIL:
        assert evil >= len(living) - evil
    elif main is Side.LOVERS:
        assert {p.seat for p in living} == {p.seat for p in state.players if p.lover}
    else:
        assert main is Side.DRAW and state.quiet_rounds >= state.options.stalemate_rounds


# --- playing and stepping through games ----------------------------------------------------------


def step_through(
    options: GameOptions, seed: int, commands: Sequence[Command], *, views: bool
) -> tuple[list[GameState], list[Event]]:
    """Re-apply the log one command at a time, checking secrecy at every step."""
    dealt = new_game(options, rng_for(seed, 0))
    state = dealt.state
    events = list(dealt.events)
    check_step(state, None, state, dealt.events, views=True)
    states = [state]
    per_step: list[Sequence[Event]] = [dealt.events]
    for index, command in enumerate(commands, start=1):
        outcome = apply(state, command, rng_for(seed, index))
        assert not isinstance(outcome, Rejection), f"logged command {index} refused: {outcome}"
        phase_changed = outcome.state.phase_seq != state.phase_seq
        check_step(state, command, outcome.state, outcome.events, views=views or phase_changed)
        state = outcome.state
        states.append(state)
        per_step.append(outcome.events)
        events.extend(outcome.events)
    check_bonds(states, per_step)
    return states, events


def check_bonds(states: Sequence[GameState], events_per_step: Sequence[Sequence[Event]]) -> None:
    """By the time night 1's main step begins (after a vagabond's steal step, S14), each member
    of the night room has learnt the room exactly once (N1) and each twin the pair (S10);
    nobody else learns either."""
    seen: list[Event] = []
    for state, events in zip(states, events_per_step, strict=True):
        seen.extend(events)
        if state.night is not None and state.night.step is NightStep.MAIN:
            break
    room = night_room(state)
    for player in state.players:
        mine = visible_events_checked(seen, Viewer.player(player.seat))
        assigned = [e for e in mine if e.code == Ev.ROLE_ASSIGNED]
        assert len(assigned) == 1, f"seat {player.seat} must be dealt one role"
        teams = [e for e in mine if e.code == Ev.TEAM_REVEALED]
        assert len(teams) == (1 if player.seat in room else 0), f"seat {player.seat}: {teams}"
        twins = [
            sorted(cast(list[int], e.params["seats"]))
            for e in mine
            if e.code == Ev.PARTNER_REVEALED and e.params["kind"] == "twin"
        ]
        if has_trait(player, Trait.BONDED_PAIR):
            pair = sorted(p.seat for p in state.players if p.role is player.role)
            assert twins == [pair], f"twin {player.seat} must learn the pair once (S10): {twins}"
        else:
            assert twins == [], f"seat {player.seat} learnt twins: {twins}"


def play_and_check(
    options: GameOptions, seed: int, temperament: Temperament, *, views: bool
) -> None:
    game = play_game(options, seed, temperament=temperament, max_commands=command_bound(options))
    final = game.state
    assert final is not None
    assert final.phase is Phase.OVER, f"no end after {len(game.commands)} commands"
    assert final.outcome is not None and final.outcome.sides
    assert final.round <= round_bound(options)
    check_outcome(final)
    states, events = step_through(options, seed, game.commands, views=views)
    assert states[-1] == final
    replayed = replay(options, seed, game.commands)
    assert replayed.state == final
    assert list(replayed.events) == events


@pytest.mark.rule("X6", "C6", "N1", "N7", "S1", "S10", "V1", "V2")
@given(options=foundings(4, VIEW_EVERY_STEP_UP_TO), seed=seeds, temperament=temperaments())
def test_bot_games_end_replay_exactly_and_keep_every_secret(
    options: GameOptions, seed: int, temperament: Temperament
) -> None:
    """Every view of every seat after every command (tables up to 16)."""
    play_and_check(options, seed, temperament, views=True)


@pytest.mark.rule("X6", "C6", "N1", "V1", "V2")
@settings(max_examples=3)
@given(options=foundings(VIEW_EVERY_STEP_UP_TO + 1, 40), seed=seeds, temperament=temperaments())
def test_large_tables_end_replay_exactly_and_keep_every_secret(
    options: GameOptions, seed: int, temperament: Temperament
) -> None:
    """Tables of 17 to 40: every event of every seat after every command; views (which list
    each seat's legal actions and are costly at 40 seats) after every phase change."""
    play_and_check(options, seed, temperament, views=False)


def test_an_empty_custom_deck_is_refused_before_dealing() -> None:
    options = GameOptions(players=6, deck=DeckId.CUSTOM, custom_roles=((RoleId.SEER, 0),))
    with pytest.raises(InvalidOptionsError):
        new_game(options, rng_for(1, 0))


# --- random commands against reached states -----------------------------------------------------

SELF_FORBIDDEN = frozenset(
    {
        ActionKind.CHECK,
        ActionKind.POISON,
        ActionKind.VISIT,
        ActionKind.SHOOT,
        ActionKind.TRANSFER_VOTE,
        ActionKind.INSTANT_KILL,
        ActionKind.STEAL,
        ActionKind.SEANCE,
        ActionKind.EVIL_VOTE,
    }
)
TIMER_TYPES = (PhaseTimeout, CallTimeout, FloorTimeout)


def must_refuse(state: GameState, cmd: Command) -> str | None:
    """Why the rules plainly forbid `cmd` now (an oracle written from RULES.md), or None."""
    if isinstance(cmd, PhaseTimeout):
        stale = cmd.phase_seq != state.phase_seq or state.phase is Phase.OVER
        return "stale phase timer" if stale else None
    if isinstance(cmd, FloorTimeout):
        day = state.day
        if day is None or day.floor != cmd.seat or state.phase_seq != cmd.phase_seq:
            return "stale floor timer"
        return "game over" if state.phase is Phase.OVER else None
    if isinstance(cmd, CallTimeout):
        if not any(c.id == cmd.call_id for c in state.calls):
            return "no such call"
        return "game over" if state.phase is Phase.OVER else None
    n = len(state.players)
    if not 1 <= cmd.actor <= n:
        return "not a player"
    if state.phase is Phase.OVER and not isinstance(cmd, Say):
        return "game over"
    me = state.player(cmd.actor)
    if not me.alive and not isinstance(cmd, HangUp | Say):
        return "D6: the dead cannot act"
    return _must_refuse_action(state, me, cmd)


def _must_refuse_action(state: GameState, me: Player, cmd: Command) -> str | None:
    n = len(state.players)
    if isinstance(cmd, UseAbility):
        if spec_of(me).ability(cmd.kind) is None:
            return "not this role's ability"
        target = cmd.target
        if target is not None and not 1 <= target <= n:
            return "no such target"
        if target == me.seat and cmd.kind in SELF_FORBIDDEN:
            return "not on oneself"
        if (
            cmd.kind in (ActionKind.EVIL_VOTE, ActionKind.INSTANT_KILL)
            and target is not None
            and spec_of(state.player(target)).night_room
        ):
            return "N4: the evil team cannot choose its own"
        if (
            cmd.kind is ActionKind.EVIL_VOTE
            and state.night is not None
            and me.seat in state.night.evil_votes
        ):
            return "N2: one evil vote per night"
    elif isinstance(cmd, Nominate):
        if state.phase is not Phase.DAY:
            return "nominations only by day"
        if cmd.target == me.seat:
            return "D2: not oneself"
        if not 1 <= cmd.target <= n or not state.player(cmd.target).alive:
            return "nominee must be a living player"
    elif isinstance(cmd, Vote):
        if state.phase is not Phase.VOTE or state.day is None:
            return "votes only in the vote"
        if me.seat in state.day.votes:
            return "D3: a vote cannot be changed"
        if cmd.target is not None and cmd.target not in state.day.nominees:
            return "D4: only nominees"
    elif isinstance(cmd, PlaceCall):
        if cmd.callee == me.seat or not 1 <= cmd.callee <= n:
            return "no such callee"
        if not state.player(cmd.callee).alive:
            return "C6: the dead cannot be called"
        if state.phase is Phase.VOTE:
            return "C8: no calls during the vote"
    elif isinstance(cmd, Say):
        text = cmd.text.strip()
        if not text or len(text) > MAX_CHAT_CHARS:
            return "empty or too long"
    return None


def commands_against(state: GameState) -> st.SearchStrategy[Command]:
    n = len(state.players)
    seats = st.one_of(st.integers(1, n), st.sampled_from((0, -1, 99)))
    targets = st.one_of(st.none(), seats)
    phase_seqs = st.one_of(st.just(state.phase_seq), st.integers(-1, state.phase_seq + 3))
    call_ids = st.integers(0, state.next_call_id + 1)
    texts = st.sampled_from(("", "   ", "Guten Morgen", "x" * (MAX_CHAT_CHARS + 1)))
    return st.one_of(
        st.builds(UseAbility, seats, st.sampled_from(list(ActionKind)), targets),
        st.builds(Nominate, seats, seats),
        st.builds(Vote, seats, targets),
        st.builds(Interject, seats),
        st.builds(PlaceCall, seats, seats),
        st.builds(AnswerCall, seats, st.booleans()),
        st.builds(HangUp, seats),
        st.builds(ToggleCallMode, seats),
        st.builds(Say, seats, texts),
        st.builds(Leave, seats),
        st.builds(PhaseTimeout, phase_seqs),
        st.builds(CallTimeout, call_ids, st.booleans()),
        st.builds(FloorTimeout, seats, phase_seqs),
    )


@pytest.mark.rule("N2", "N4", "C6", "D3", "D6", "X6")
@settings(max_examples=40)
@given(options=foundings(4, 30), seed=seeds, data=st.data())
def test_refused_commands_change_nothing_and_validate_agrees_with_apply(
    options: GameOptions, seed: int, data: st.DataObject
) -> None:
    game = play_game(options, seed, max_commands=command_bound(options))
    opened = new_game(options, rng_for(seed, 0))
    states = states_along(opened, apply, game.commands, partial(rng_for, seed))
    for probe in range(3):
        state = states[data.draw(st.integers(0, len(states) - 1), label="state")]
        check_legal_actions(state, data)
        for attempt in range(8):
            command = data.draw(commands_against(state), label="command")
            pristine = copy.deepcopy(state)
            expected = validate(state, command)
            outcome = apply(state, command, rng_for(seed, 1_000_000 + 100 * probe + attempt))
            assert state == pristine, f"{command!r} changed the state it was given"
            reason = must_refuse(pristine, command)
            if isinstance(outcome, Rejection):
                assert expected == outcome, f"validate said {expected}, apply {outcome}"
                continue
            assert expected is None, f"validate refused {expected} but apply accepted"
            assert reason is None, f"accepted {command!r} though {reason}"
            small = len(state.players) <= VIEW_EVERY_STEP_UP_TO
            check_step(pristine, command, outcome.state, outcome.events, views=small)


def check_legal_actions(state: GameState, data: st.DataObject) -> None:
    """Everything offered is accepted and breaks no plain rule (N4: teammates never offered)."""
    n = len(state.players)
    seats = data.draw(st.lists(st.integers(1, n), max_size=3, unique=True), label="menu seats")
    for seat in seats:
        for command in legal_actions(state, seat):
            assert must_refuse(state, command) is None, f"offered {command!r}"
            outcome = apply(state, command, rng_for(0, 1))
            assert not isinstance(outcome, Rejection), f"offered {command!r} refused: {outcome}"
