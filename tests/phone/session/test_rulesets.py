"""The classic (seed 003) and mayor (seed 000) rules by telephone: every action by keys.

Callers join a round founded as the web would found it and play only with keys; the test
plays the clock (PhaseTimeout through the hub, as the actor's timer would) and reads the deal
to know who presses what. The deal is chosen by the game's seed: the test looks for a seed
whose deal puts every card it needs on the table and founds the round with it.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

import pytest

from vollmond.engine.classic.options import ClassicOptions
from vollmond.engine.classic.types import DeckId, Kind, Role
from vollmond.engine.core import Audience, AudienceKind, Event, Viewer
from vollmond.engine.kit.commands import PhaseTimeout
from vollmond.engine.mayor.options import Durations as MayorDurations
from vollmond.engine.mayor.options import MayorOptions
from vollmond.engine.ruleset import get_ruleset
from vollmond.i18n import render_event, text
from vollmond.phone.session import PhoneSession
from vollmond.phone.session.codes import phone_code
from vollmond.service.hub import Hub
from vollmond.store import read_events
from vollmond.worlds import get_world

from .support import call_in, heard, press, said, wait_until

DW = get_world("duesterwald")
TW = get_world("thueringer_wald")


def seed_for(ruleset: str, options: Any, fits: Callable[[Any], bool]) -> int:
    """The first seed whose deal fits (the deal is the rule set's, from the seed alone)."""
    rules = get_ruleset(ruleset)
    for seed in range(500):
        if fits(rules.new_game(options, rules.rng_for(seed, 0)).state):
            return seed
    raise AssertionError("no seed deals what the test needs")


async def seat_callers(
    hub: Hub, monkeypatch: pytest.MonkeyPatch, ruleset: str, options: Any, seed: int
) -> tuple[str, list[PhoneSession]]:
    """Found a private round with `seed` (as the web would) and seat one caller per place by
    its number code; the round starts when the last one sits."""
    monkeypatch.setattr(secrets, "randbelow", lambda _n: seed)  # the hub draws the seed
    founded = await hub.found(
        options, ruleset=ruleset, private=True, host_account_id=None, channel="web"
    )
    monkeypatch.undo()
    assert founded.invitation_code is not None
    digits = phone_code(founded.invitation_code)
    sessions = []
    for i in range(options.players):
        session = await call_in(hub, f"+4930200{i}")
        await press(session, "2")  # guest
        await press(session, "2")  # join by code
        await press(session, digits + "#")
        sessions.append(session)
    for session in sessions:
        await wait_until(lambda s=session: s.seat is not None)  # type: ignore[misc]
    return founded.game.id, sessions


def state_of(hub: Hub, game_id: str) -> Any:
    state = hub.actors[game_id].state
    assert state is not None
    return state


async def timeout(hub: Hub, game_id: str) -> None:
    await hub.submit(game_id, PhaseTimeout(state_of(hub, game_id).phase_seq))


async def until(hub: Hub, game_id: str, stage: str) -> None:
    """Let the clock run out until `stage` runs (the stage's name, as the rule set has it)."""
    for _ in range(40):
        if str(state_of(hub, game_id).stage) == stage:
            return
        await timeout(hub, game_id)
    raise AssertionError(f"stage {stage} never came")


def seat_of(session: PhoneSession) -> int:
    assert session.seat is not None
    return session.seat


async def settled(sessions: list[PhoneSession]) -> None:
    for session in sessions:
        await session.idle()


async def assert_secrets_kept(
    hub: Hub, game_id: str, seated: list[tuple[int, PhoneSession]]
) -> None:
    """No caller heard the words of an event its seat was not in the audience of (unless
    the same words also came from an event it was entitled to)."""
    actor = hub.actors[game_id]
    world = get_world(actor.options.world)
    everything = await actor.history_for(Viewer.spectator(), 0)  # the public part
    stored = await read_events(hub.sessions, game_id, 0)
    events = []
    for row in stored:
        raw = row.audience
        assert isinstance(raw, dict)
        audience = Audience(AudienceKind(raw["kind"]), frozenset(raw.get("seats", ())))
        payload = row.payload if isinstance(row.payload, dict) else {}
        events.append(Event(row.kind, audience, payload))
    assert len(events) >= len(everything)
    rs = actor.ruleset.id
    for seat, session in seated:
        viewer = Viewer.player(seat)
        mine = {render_event(e, "de", world, rs) for e in events if e.audience.includes(viewer)}
        secret = {
            render_event(e, "de", world, rs) for e in events if not e.audience.includes(viewer)
        }
        leaked = (secret - mine) & set(session.spoken())
        assert leaked == set(), (viewer, leaked)
        assert mine & set(session.spoken())  # and it did hear its own


# --- classic ---------------------------------------------------------------------------------

CLASSIC_CARDS = (
    Role.THIEF,
    Role.AMOR,
    Role.WEREWOLF,
    Role.SEEING_WOLF,
    Role.SEER,
    Role.HERB_WITCH,
    Role.SANDMAN,
)


def classic(*cards: Role, **extra: Any) -> ClassicOptions:
    return ClassicOptions(
        players=len(cards),
        deck=DeckId.CUSTOM,
        custom_roles=tuple((r, cards.count(r)) for r in dict.fromkeys(cards)),
        **extra,
    )


def c(key: str, **params: Any) -> str:
    return text(key, "de", DW, **params)


@pytest.mark.rule("A3", "A4", "A5", "A6", "A7", "A8", "A9", "A11", "A15")
async def test_classic_every_night_and_day_action_by_keys(  # noqa: PLR0915
    hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One classic round read top to bottom: the thief's card, Amor's two lovers, the
    captain's election, the quiet first night at a small table, the seeing werewolf, the
    seer (a refusal with the rules' reason first), the sandman, the day's vote with a hand
    kept down, the captain's tie-break, the wolves' vote and the herb witch's heal."""
    options = classic(*CLASSIC_CARDS)
    seed = seed_for(
        "classic",
        options,
        lambda s: {p.role for p in s.players} == set(CLASSIC_CARDS),
    )
    game_id, sessions = await seat_callers(hub, monkeypatch, "classic", options, seed)
    state = state_of(hub, game_id)
    by_seat = {seat_of(s): s for s in sessions}
    seated = list(by_seat.items())
    by_role = {p.role: by_seat[p.seat] for p in state.players}
    thief, amor, wolf = by_role[Role.THIEF], by_role[Role.AMOR], by_role[Role.WEREWOLF]
    seeing, seer = by_role[Role.SEEING_WOLF], by_role[Role.SEER]
    witch, sandman = by_role[Role.HERB_WITCH], by_role[Role.SANDMAN]
    await settled(sessions)

    # The thief: the two cards by number, the keys at once (urgent), then "1#".
    assert str(state.stage) == "thief"
    assert heard(thief, c("classic.phone.can.take_card", numbers="1 und 2", targets=""))
    assert not heard(amor, c("classic.phone.can.take_card", numbers="1 und 2", targets=""))
    await press(thief, "1#")
    assert heard(thief, "Du hast die Karte genommen und bist jetzt Dorfbewohner.")

    # Amor: two houses one after the other; the first waits for the second.
    await until(hub, game_id, "amor")
    await settled(sessions)
    assert heard(amor, "Mach zwei Leute verliebt")
    first, second = seat_of(seer), seat_of(sandman)
    await press(amor, f"{first}#")
    assert said(amor)[-1] == c("classic.phone.more.link")
    await press(amor, f"{second}#")
    assert state_of(hub, game_id).players[first - 1].lover
    assert state_of(hub, game_id).players[second - 1].lover

    # The captain's election: everybody types a house; the seer is elected.
    await until(hub, game_id, "election")
    await settled(sessions)
    for session in sessions:
        assert heard(session, "Wähle den Hauptmann")
        await press(session, f"{seat_of(seer)}#")
    await until(hub, game_id, "wolves")
    assert state_of(hub, game_id).captain == seat_of(seer)

    # The first night at a table below 9: the wolves' vote is refused with the reason (A15).
    await settled(sessions)
    before = len(said(wolf))
    await press(wolf, f"{seat_of(sandman)}#")
    assert c("classic.reject.quiet_night") in said(wolf, before)

    # The seeing werewolf looks for the seer (A11).
    await until(hub, game_id, "seeing_wolf")
    await settled(sessions)
    assert heard(seeing, "Such den Seher")
    await press(seeing, f"{seat_of(seer)}#")
    assert heard(seeing, f"Hausnummer {seat_of(seer)}: Ist es der Seher?")

    # The seer: her own house is refused with the rules' reason; then a card is seen.
    await until(hub, game_id, "seer")
    await settled(sessions)
    before = len(said(seer))
    await press(seer, f"{seat_of(seer)}#")
    assert c("classic.reject.target_self") in said(seer, before)
    await press(seer, f"{seat_of(wolf)}#")
    assert heard(seer, f"Hausnummer {seat_of(wolf)}: Werwolf?")

    # The sandman asks whether someone was awake (A8).
    await until(hub, game_id, "sandman")
    await settled(sessions)
    await press(sandman, f"{seat_of(seer)}#")
    assert heard(sandman, f"Hausnummer {seat_of(seer)} war heute Nacht wach?")

    # The day's vote: two hands against the thief, two against Amor, the rest kept down
    # with 0#; the captain breaks the tie (A9, A5).
    await until(hub, game_id, "day")
    await settled(sessions)
    assert heard(wolf, "Heb die Hand gegen jemanden")
    assert heard(wolf, c("classic.phone.can.abstain"))
    await press(wolf, f"{seat_of(thief)}#")
    await press(seeing, f"{seat_of(thief)}#")
    await press(witch, f"{seat_of(amor)}#")
    await press(sandman, f"{seat_of(amor)}#")
    for session in (thief, amor, seer):
        await press(session, "0#")
    await until(hub, game_id, "tiebreak")
    await settled(sessions)
    assert heard(seer, "Du entscheidest den Gleichstand")
    await press(seer, f"{seat_of(thief)}#")
    assert not state_of(hub, game_id).players[seat_of(thief) - 1].alive
    assert heard(wolf, f"Hausnummer {seat_of(thief)}")

    # Night 2: the wolves point at the sandman; the herb witch hears the victim and heals
    # him by typing his house (A7).
    await until(hub, game_id, "wolves")
    await settled(sessions)
    await press(wolf, f"{seat_of(sandman)}#")
    await press(seeing, f"{seat_of(sandman)}#")
    await until(hub, game_id, "witch")
    await settled(sessions)
    assert heard(witch, f"Das Opfer dieser Nacht ist Hausnummer {seat_of(sandman)}.")
    await press(witch, f"{seat_of(sandman)}#")  # the only thing she may do for him
    assert state_of(hub, game_id).players[seat_of(witch) - 1].spent
    await until(hub, game_id, "day")
    assert state_of(hub, game_id).players[seat_of(sandman) - 1].alive

    # The info keys: #3 the phase, #5 the card and what it does, #4 who lives; secrets kept.
    await settled(sessions)
    await press(seer, "#3")
    day_round = state_of(hub, game_id).round
    assert heard(seer, c("phone.game.status", phase="Tag", round=day_round))
    await press(seer, "#5")
    assert said(seer)[-1] == c("classic.phone.role_help.seer")
    await press(thief, "#4")  # banished: the dead hear who lives, and only listen
    dead = c("fmt.death", seat=f"Hausnummer {seat_of(thief)}", role="Dorfbewohner")
    assert said(thief)[-1] == c("phone.game.dead_list", list=dead)
    await press(thief, "3#")
    assert said(thief)[-1] == c("phone.game.dead_keys")
    await assert_secrets_kept(hub, game_id, seated)
    for session in sessions:
        await session.close()


@pytest.mark.rule("A5", "A7")
async def test_classic_poison_pass_and_a_fallen_captain_names_his_successor_by_keys(
    hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two herb witches: one poisons with ``NN#``, one passes with ``0#``; the captain,
    banished by day, names the next captain by keys, though no longer in the game."""
    cards = (Role.WEREWOLF, Role.HERB_WITCH, Role.HERB_WITCH, Role.SEER, Role.VILLAGER)
    options = classic(*cards, Role.VILLAGER)
    game_id, sessions = await seat_callers(
        hub, monkeypatch, "classic", options, seed_for("classic", options, lambda s: True)
    )
    state = state_of(hub, game_id)
    by_seat = {seat_of(s): s for s in sessions}
    seats = {r: [p.seat for p in state.players if p.role is r] for r in set(cards)}
    poisoner, passer = (by_seat[s] for s in seats[Role.HERB_WITCH])
    captain, victim = (by_seat[s] for s in seats[Role.VILLAGER])

    await until(hub, game_id, "election")
    for session in sessions:
        await press(session, f"{seat_of(captain)}#")
    await until(hub, game_id, "witch")
    await settled(sessions)
    assert heard(passer, c("classic.phone.can.pass"))
    await press(passer, "0#")  # not tonight: her one action stays (A7)
    assert state_of(hub, game_id).night.acted(seat_of(passer), Kind.PASS)
    await press(poisoner, f"{seat_of(victim)}#")
    assert state_of(hub, game_id).players[seat_of(poisoner) - 1].spent
    assert not state_of(hub, game_id).players[seat_of(passer) - 1].spent
    await until(hub, game_id, "day")
    assert not state_of(hub, game_id).players[seat_of(victim) - 1].alive

    # The day: everybody else raises a hand against the captain; he names his successor.
    await settled(sessions)
    for session in sessions:
        if session not in (captain, victim):
            await press(session, f"{seat_of(captain)}#")
    await until(hub, game_id, "succession_evening")
    await settled(sessions)
    assert heard(captain, "Bestimme deinen Nachfolger")
    await press(captain, f"{seat_of(passer)}#")
    assert state_of(hub, game_id).captain == seat_of(passer)
    for session in sessions:
        await session.close()


# --- mayor -----------------------------------------------------------------------------------


def m(key: str, **params: Any) -> str:
    return text(key, "de", TW, **params)


@pytest.mark.rule("B1", "B2", "B3", "B5")
async def test_mayor_every_action_by_keys(  # noqa: PLR0915
    hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One mayor round by keys: standing with 1, declining with 2, ending one's
    introduction with *#, the ballot, a vote for someone not on the ballot refused with the
    rules' reason, the Nazi's victim, a citizen's night key refused, an accusation, the
    defence ended early, the compulsory vote (0# is no abstention) and the end."""
    options = MayorOptions(players=5, nazis=1, lovers=False, durations=MayorDurations())
    game_id, sessions = await seat_callers(
        hub, monkeypatch, "mayor", options, seed_for("mayor", options, lambda s: True)
    )
    state = state_of(hub, game_id)
    by_seat = {seat_of(s): s for s in sessions}
    seated = list(by_seat.items())
    nazi = next(by_seat[p.seat] for p in state.players if p.role.night_room)
    citizens = [s for s in sessions if s is not nazi]
    first, second, third, fourth = citizens
    await settled(sessions)

    # Candidacy: 1 stands, 2 declines, both at once without # (B1).
    assert str(state.stage) == "candidacy"
    assert heard(first, m("mayor.phone.can.stand"))
    assert first.mode.immediate() == frozenset("12")  # no # needed
    await press(first, "1")
    await press(second, "1")
    await press(third, "2")
    election = state_of(hub, game_id).election
    assert election is not None
    assert set(election.candidates) == {seat_of(first), seat_of(second)}
    assert seat_of(third) in election.declined
    for session in (fourth, nazi):
        await press(session, "2")

    # The introductions: each candidate has the floor and ends it early with *#.
    await until(hub, game_id, "introductions")
    for _ in range(2):
        await settled(sessions)
        floor = state_of(hub, game_id).floor
        assert floor is not None and floor.speaker is not None
        speaker = by_seat[floor.speaker]
        assert heard(speaker, m("mayor.phone.can.yield"))
        await press(speaker, "*#")
    await until(hub, game_id, "ballot")

    # The ballot: a house not on it is refused with the rules' reason; then everybody votes.
    await settled(sessions)
    before = len(said(third))
    await press(third, f"{seat_of(fourth)}#")
    assert m("mayor.reject.not_a_candidate", target=f"Hausnummer {seat_of(fourth)}") in said(
        third, before
    )
    for session in sessions:
        await press(session, f"{seat_of(first)}#")
    await until(hub, game_id, "night")
    assert state_of(hub, game_id).mayor == seat_of(first)

    # The night: a citizen's key is refused; the Nazi alone agrees with himself (B5).
    await settled(sessions)
    before = len(said(second))
    await press(second, f"{seat_of(third)}#")
    assert m("mayor.reject.no_night_action") in said(second, before)
    assert heard(nazi, "Zeigt gemeinsam auf ein Opfer")
    await press(nazi, f"{seat_of(fourth)}#")
    await until(hub, game_id, "accusations")
    assert not state_of(hub, game_id).player(seat_of(fourth)).alive
    await settled(sessions)
    await press(fourth, f"{seat_of(nazi)}#")  # out of the game: only listening (B6)
    assert said(fourth)[-1] == m("phone.game.dead_keys")

    # The day: an accusation by keys, the defence ended early with *#.
    await settled(sessions)
    assert heard(second, "erhebe Anklage")
    await press(second, f"{seat_of(nazi)}#")
    await until(hub, game_id, "defence")
    await settled(sessions)
    assert heard(nazi, m("mayor.phone.can.yield"))
    await press(nazi, "*#")
    await until(hub, game_id, "vote")

    # The compulsory vote: 0# is no abstention (B3); the accused goes to prison.
    await settled(sessions)
    before = len(said(third))
    await press(third, "0#")
    assert m("phone.game.no_action") in said(third, before)
    for session in (first, second, third):
        await press(session, f"{seat_of(nazi)}#")
    await press(nazi, f"{seat_of(nazi)}#")  # refused: not on oneself; the clock ends it
    await timeout(hub, game_id)
    final = state_of(hub, game_id)
    assert final.is_over
    for session in (first, second, third, nazi):
        await wait_until(lambda s=session: s.game_id is None)  # type: ignore[misc]
        assert heard(session, "Die Demokratie in")
    await assert_secrets_kept(hub, game_id, seated)
    for session in sessions:
        await session.close()


# --- founding by phone -----------------------------------------------------------------------


@pytest.mark.rule("X1")
@pytest.mark.parametrize(
    ("key", "ruleset", "world", "low"),
    [("2#", "classic", "duesterwald", 5), ("3#", "mayor", "thueringer_wald", 4)],
)
async def test_founding_by_phone_chooses_the_rules(
    hub: Hub, key: str, ruleset: str, world: str, low: int
) -> None:
    """00# asks for the rules first; a rule set with one world goes straight to the size,
    which starts at the rules' smallest table; the round is founded with the rules' own
    defaults and the founder sits at it. The public list names every rule set's worlds."""
    host = await call_in(hub)
    await press(host, "2")
    await press(host, "00#")
    assert said(host)[-1] == c(
        "phone.menu.rulesets",
        list="1 Vollmond, zehn Welten; 2 Klassisch: Düsterwald, mit Hauptmann; "
        "3 Bürgermeister*in-Wahl im Thüringer Wald",
    )
    await press(host, key)
    assert said(host)[-1] == c("phone.menu.ask_size", min=low, max=9)
    await press(host, f"{low - 1}#")
    assert host.announcer.state == "size"  # below the rules' smallest table: asked again
    await press(host, f"{low}#")
    assert host.announcer.state == "lobby"
    game_id = host.game_id
    assert game_id is not None
    table = await hub.table(game_id)
    assert table.game.ruleset == ruleset and table.game.world == world
    assert table.game.options["engine"]["players"] == low
    await press(host, "#9")
    await press(host, "1")  # public games: the worlds of every rule set, standard first
    await press(host, "#1")  # the whole list
    assert "10 Bunker 13; 11 Düsterwald; 12 Thüringer Wald" in said(host)[-1]
    await host.close()


@pytest.mark.rule("X1")
async def test_listening_in_on_a_classic_game_by_phone(hub: Hub) -> None:
    """A running public classic game is in the listen-in list of its world (11#) with its
    phase in the rules' own word; the listener hears the public news and may only listen."""
    options = ClassicOptions(players=5)
    founded = await hub.found(
        options, ruleset="classic", private=False, host_account_id=None, host_name="p1"
    )
    for i in range(2, 6):
        await hub.join(founded.game.id, account_id=None, name=f"p{i}", channel="web")
    assert hub.actors[founded.game.id].state is not None
    listener = await call_in(hub)
    await press(listener, "2")
    await press(listener, "3")
    await press(listener, "11#")  # Düsterwald
    phase = c(f"classic.phone.phase.{state_of(hub, founded.game.id).phase.value}")
    assert heard(listener, c("phone.menu.watch_item", n=1, players=5, phase=phase))
    await press(listener, "1#")
    assert listener.spectating
    await press(listener, "3#")
    assert said(listener)[-1] == c("phone.game.spectator_keys")
    await timeout(hub, founded.game.id)
    await settled([listener])
    assert heard(listener, "Das Dorf wählt seinen Hauptmann.")
    await listener.close()
