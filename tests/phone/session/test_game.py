"""Whole games by phone: every key command, narration, refusals, and secrecy, on a real hub.

The test itself plays the clock (PhaseTimeout through the hub, as the actor's timer would) and
looks at the dealt roles to decide who presses what; the sessions only ever get keys.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest

from tests.needs import need
from vollmond.engine.core import Audience, AudienceKind, Event, Viewer
from vollmond.engine.standard import CallSettings, GameOptions, PhaseTimeout, UseAbility
from vollmond.engine.standard.types import ActionKind, DayCallModes, DeckId, Phase, RoleId
from vollmond.i18n import render_event, text
from vollmond.phone.session import EspeakVoice, PhoneSession
from vollmond.phone.session.codes import phone_code
from vollmond.service.hub import Hub
from vollmond.store import create_account, read_events, set_account_pin
from vollmond.worlds import get_world

from .support import call_in, heard, press, said, verified_number, wait_until

W = get_world("werwolf")


def t(key: str, **params: object) -> str:
    return text(key, "de", W, **params)  # type: ignore[arg-type]


def custom(*roles: RoleId, **extra: object) -> GameOptions:
    return GameOptions(
        players=len(roles),
        deck=DeckId.CUSTOM,
        custom_roles=tuple((r, sum(1 for x in roles if x is r)) for r in dict.fromkeys(roles)),
        **extra,  # type: ignore[arg-type]
    )


async def seat_callers(
    hub: Hub, options: GameOptions, count: int
) -> tuple[str, list[PhoneSession]]:
    """Found a private round (as the web would) and let `count` callers join by number code."""
    founded = await hub.found(options, private=True, host_account_id=None, channel="web")
    assert founded.invitation_code is not None
    digits = phone_code(founded.invitation_code)
    sessions = []
    for i in range(count):
        session = await call_in(hub, f"+4930100{i}")
        await press(session, "2")  # guest
        await press(session, "2")  # join by code
        await press(session, digits + "#")
        sessions.append(session)
    return founded.game.id, sessions


async def started(sessions: Iterable[PhoneSession]) -> None:
    for session in sessions:
        await wait_until(lambda s=session: s.seat is not None)  # type: ignore[misc]


async def advance(hub: Hub, game_id: str) -> None:
    state = hub.actors[game_id].state
    assert state is not None
    await hub.submit(game_id, PhaseTimeout(state.phase_seq))


def by_role(hub: Hub, game_id: str, sessions: list[PhoneSession]) -> dict[RoleId, PhoneSession]:
    state = hub.actors[game_id].state
    assert state is not None
    seat_of = {s.seat: s for s in sessions}
    return {p.role: seat_of[p.seat] for p in state.players if p.seat in seat_of}


def in_menu(session: PhoneSession) -> bool:
    return session.game_id is None and not session.spectating and session.seat is None


def house(session: PhoneSession) -> int:
    assert session.seat is not None
    return session.seat


async def assert_secrets_kept(
    hub: Hub, game_id: str, listeners: list[tuple[Viewer, PhoneSession]]
) -> None:
    """No session spoke the text of an event its viewer was not in the audience of (unless the
    same words also came from an event it was entitled to)."""
    stored = await read_events(hub.sessions, game_id, 0)
    events = []
    for row in stored:
        raw = row.audience
        assert isinstance(raw, dict)
        audience = Audience(AudienceKind(raw["kind"]), frozenset(raw.get("seats", ())))
        payload = row.payload if isinstance(row.payload, dict) else {}
        events.append(Event(row.kind, audience, payload))
    for viewer, session in listeners:
        mine = {render_event(e, "de", W) for e in events if e.audience.includes(viewer)}
        secret = {render_event(e, "de", W) for e in events if not e.audience.includes(viewer)}
        leaked = (secret - mine) & set(session.spoken())
        assert leaked == set(), (viewer, leaked)


@pytest.mark.rule("C1", "C2", "C3", "C4", "C9", "S18", "S19", "O1", "D1", "S1", "X1")
async def test_a_whole_game_by_phone_with_every_key_command(hub: Hub) -> None:  # noqa: PLR0915
    """One story from the deal to the victory; long on purpose, read it top to bottom."""
    options = custom(
        RoleId.EVIL,
        RoleId.SEER,
        RoleId.DOCTOR,
        RoleId.HUNTER,
        RoleId.VOTE_GIVER,
        RoleId.FILLER,
        instant_kill=True,
        calls=CallSettings(by_day=True, day_modes=DayCallModes.BOTH),
    )
    game_id, sessions = await seat_callers(hub, options, 6)
    await started(sessions)
    role = by_role(hub, game_id, sessions)
    evil, seer, doctor = role[RoleId.EVIL], role[RoleId.SEER], role[RoleId.DOCTOR]
    hunter, giver, filler = role[RoleId.HUNTER], role[RoleId.VOTE_GIVER], role[RoleId.FILLER]
    he, hs, hd, hh, hv, hf = (house(s) for s in (evil, seer, doctor, hunter, giver, filler))
    viewers = [(Viewer.player(house(s)), s) for s in sessions]

    # The start: house number, own role, the night walk of the deck's night roles.
    for session in sessions:
        assert heard(session, f"Deine Hausnummer ist {house(session)}.")
        assert heard(session, "Deine Rolle in diesem Spiel")
        assert heard(session, t("phone.night.step.seer"))
    # The seer's own instructions come before the walk, with the time left (urgent).
    seer_lines = said(seer)
    turn = seer_lines.index(t("phone.night.your_turn"))
    assert turn < seer_lines.index(t("phone.night.step.seer"))
    assert seer_lines[turn + 2].startswith("Noch ") and "Sekunden" in seer_lines[turn + 2]
    assert heard(seer, t("phone.night.your_turn"))
    assert not heard(filler, t("phone.night.your_turn"))
    assert heard(evil, "Du gehörst zu den Werwölfen")

    # Night 1: the night actions by NN#.
    await press(seer, f"{he}#")
    assert heard(seer, f"Hausnummer {he}") and heard(seer, "Werw")
    await press(doctor, f"{hs}#")
    assert heard(doctor, f"Du wachst heute Nacht über Hausnummer {hs}")
    await press(evil, f"{hf}#")
    assert heard(evil, f"Deine Stimme für Hausnummer {hf} zählt")
    await press(evil, f"{hf}#")  # a second vote is refused, with the reason and the choices
    assert heard(evil, t("reject.already_acted"))

    # A night call (C1), answered with 1 (C2); a second caller meets a busy line (C3).
    await press(giver, f"*0{hh}#")
    assert heard(giver, f"Du rufst Hausnummer {hh} an")
    assert heard(hunter, f"Hausnummer {hv} ruft dich an")
    assert any(s.tone == "incoming_ring" for s in hunter.transcript)
    assert giver.prompts.queued_tones == ["ringing"]  # the ringback, as long as it rings
    await press(hunter, "1")
    assert heard(hunter, "Die Leitung steht") and heard(giver, "Die Leitung steht")
    assert giver.prompts.queued_tones == [] and hunter.prompts.queued_tones == []
    await press(seer, f"*0{hh}#")
    assert any(s.tone == "busy" for s in seer.transcript)
    await press(giver, "*0*")  # toggling is a day thing (C9): the engine's reason is spoken
    assert heard(giver, t("reject.mode_fixed")) or heard(giver, t("reject.wrong_phase"))
    await press(giver, "#")  # C4: hang up with # alone, at once
    assert heard(hunter, t("event.call_ended.hung_up"))
    # ... and a call declined with 2.
    await press(evil, f"*0{hv}#")
    await press(giver, "2")
    assert heard(evil, f"Hausnummer {hv} hat den Anruf abgelehnt")
    await press(hunter, f"*0{hs}#")
    await press(hunter, "*0#")  # *0# hangs up too (here: stops the ringing)
    assert hunter.seat is not None

    # Info keys, wrong keys, the operator (O1).
    mark = len(said(giver))
    await press(giver, "#3")
    assert said(giver, mark)[0] == t("phone.game.status", phase="Nacht", round=1)
    await press(giver, "#4")
    assert heard(giver, "Es leben noch: Hausnummern 1, 2, 3, 4, 5 und 6.", mark)
    await press(giver, "#5")
    assert heard(giver, "Einmal am Tag kannst du deine Stimme", mark)
    await press(giver, "#1")
    assert heard(giver, t("phone.can.call"), mark) and heard(giver, t("phone.info_keys"), mark)
    await press(giver, "5#")
    assert heard(giver, t("phone.game.no_action"), mark)
    await press(filler, "##")
    assert heard(filler, t("phone.game.no_nobody"))
    await press(filler, "*3#")  # a day action of a role without one: nothing to refuse
    assert heard(filler, t("phone.game.no_day_action"))
    await press(filler, "*5*")
    assert heard(filler, t("phone.keyerror.misplaced_star"))
    await press(hunter, "*9#")
    await press(hunter, f"*910{hf}#")
    await press(hunter, "*95#")
    assert [(c.reason, c.player) for c in hunter.operator_calls] == [(None, None), (1, hf)]
    assert heard(hunter, t("phone.operator_called"))
    assert heard(hunter, t("phone.operator_bad_reason"))

    # Morning: the dead with their roles; the interjection (S19); the hunter's shot (* NN #).
    await advance(hub, game_id)
    for session in sessions:
        assert heard(session, f"Hausnummer {hf} (Dorfbewohner)")
    assert heard(filler, t("phone.game.dead"))
    await press(filler, f"{hs}#")
    assert heard(filler, t("phone.game.dead_keys"))
    await press(seer, "*#")
    assert heard(doctor, f"Einspruch! Hausnummer {hs} hat jetzt")
    await press(hunter, f"*{hd}#")
    assert heard(seer, f"Ein Schuss hallt über den Marktplatz! Hausnummer {hd} (Ärztin)") or heard(
        seer, f"Hausnummer {hd} ("
    )

    # Day: a day call switched to Halbmodus (C9); Sofort-Mord (S18); the vote transfer.
    await advance(hub, game_id)
    await press(giver, f"*0{hh}#")
    await press(hunter, "1")
    await press(giver, "*0*")
    assert heard(giver, "Halbmodus")
    await press(hunter, "#")
    await press(evil, f"*{hh}#")
    assert heard(seer, f"Hausnummer {hh} (Jäger) ist tot") or heard(seer, f"Hausnummer {hh} (")
    await press(giver, f"*{hs}#")
    assert heard(giver, f"überlässt die eigene Stimme heute Hausnummer {hs}")
    await press(seer, f"{he}#")
    await press(evil, f"{hs}#")
    assert heard(giver, f"Hausnummer {hs} schlägt Hausnummer {he} zur Verbannung vor")

    # The vote: NN#; the giver has no vote left; the banished evil player ends the game.
    await advance(hub, game_id)
    assert heard(seer, t("phone.can.vote", targets=f"Hausnummern {min(he, hs)} und {max(he, hs)}"))
    await press(giver, f"{he}#")
    assert heard(giver, t("reject.vote_given_away"))
    await press(seer, f"{he}#")
    await press(evil, f"{hs}#")
    for session in sessions:
        assert heard(session, "Sieg für das Dorf")
        await wait_until(lambda s=session: s.game_id is None)  # type: ignore[misc]
        assert heard(session, t("phone.menu.game_over"))

    await assert_secrets_kept(hub, game_id, viewers)
    for session in (giver, filler, doctor, hunter):  # villagers: no night room, no seer result
        assert not heard(session, "Du gehörst zu den Werwölfen")
        assert not heard(session, f"stimmt für Hausnummer {hf}")
    for session in sessions:
        if session is not seer:
            assert not heard(session, "Du prüfst")
        if session not in (giver, hunter):
            assert not any("Die Leitung steht" in line for line in session.spoken())
        await session.close()


@pytest.mark.rule("D3")
async def test_zero_abstains_after_a_pause_and_a_leading_zero_is_a_house(hub: Hub) -> None:
    options = custom(RoleId.EVIL, RoleId.FILLER, RoleId.FILLER, RoleId.FILLER, RoleId.FILLER)
    game_id, sessions = await seat_callers(hub, options, 5)
    await started(sessions)
    for session in sessions:
        session.keys.timeout_s = 0.2
    role = by_role(hub, game_id, sessions)
    evil = role[RoleId.EVIL]
    villagers = [s for s in sessions if s is not evil]
    await advance(hub, game_id)  # night -> morning (nobody voted: nobody dies)
    await advance(hub, game_id)  # -> day
    a, b, c, _ = villagers
    await press(a, f"0{house(evil)}#")  # leading zero: still a house number
    assert heard(b, f"Hausnummer {house(a)} schlägt Hausnummer {house(evil)} zur Verbannung vor")
    await advance(hub, game_id)  # -> vote
    b.on_key("0")  # 0 and a pause: abstain
    await wait_until(lambda: heard(a, f"Hausnummer {house(b)} hat abgestimmt"), 5)
    await press(c, "0#")  # 0# abstains at once
    assert heard(a, f"Hausnummer {house(c)} hat abgestimmt")
    state = hub.actors[game_id].state
    assert state is not None and state.day is not None
    assert state.day.votes == {house(b): None, house(c): None}
    for session in sessions:
        await session.close()


async def test_a_caller_who_hangs_up_keeps_the_seat_and_can_listen_in_again(hub: Hub) -> None:
    options = custom(RoleId.EVIL, RoleId.SEER, RoleId.FILLER, RoleId.FILLER)
    game_id, sessions = await seat_callers(hub, options, 4)
    await started(sessions)
    first = sessions[0]
    seat = first.seat
    assert hub.presence.connected(game_id, house(first))
    await first.close()
    assert not hub.presence.connected(game_id, house(first))
    assert hub.actors[game_id].state is not None
    state = hub.actors[game_id].state
    assert state is not None and state.player(seat or 0).alive
    subscribers = hub.actors[game_id].subscribers
    assert all(sub.viewer != Viewer.player(seat or 0) for sub in subscribers)
    # A spectator by phone: 3, world, table.
    watcher = await call_in(hub)
    await press(watcher, "2")
    await press(watcher, "3")
    await press(watcher, "1#")
    assert not heard(watcher, "Laufende Spiele in Werwolf")  # private rounds are not listed
    for session in sessions[1:]:
        await session.close()
    await watcher.close()


@pytest.mark.rule("X6", "C6")
async def test_spectators_listen_only_and_hear_no_secrets(hub: Hub) -> None:
    options = custom(RoleId.EVIL, RoleId.SEER, RoleId.FILLER, RoleId.FILLER)
    founded = await hub.found(options, private=False, host_account_id=None, channel="web")
    game_id = founded.game.id
    players = []
    for _ in range(4):
        player = await call_in(hub)
        await press(player, "2")
        await press(player, "1")
        await press(player, "1#")
        await press(player, "1#")
        players.append(player)
    await started(players)
    watcher = await call_in(hub)
    await press(watcher, "2")
    await press(watcher, "3")
    await press(watcher, "1#")
    assert heard(watcher, "Laufende Spiele: 1: 4 Leute, Nacht")
    await press(watcher, "1#")
    assert watcher.spectating and watcher.game_id == game_id and watcher.seat is None
    assert heard(watcher, t("phone.night.step.seer"))
    await press(watcher, "3#")
    assert heard(watcher, t("phone.game.spectator_keys"))
    role = by_role(hub, game_id, players)
    seer, evil = role[RoleId.SEER], role[RoleId.EVIL]
    await press(seer, f"{house(evil)}#")
    await press(evil, f"{house(seer)}#")
    await advance(hub, game_id)
    assert heard(watcher, f"Hausnummer {house(seer)} (Seherin)")
    listeners = [(Viewer.player(house(p)), p) for p in players]
    await assert_secrets_kept(hub, game_id, [*listeners, (Viewer.spectator(), watcher)])
    await press(watcher, "#9")
    assert in_menu(watcher)
    assert heard(watcher, t("phone.menu.choices"))
    for session in (*players, watcher):
        await session.close()


async def test_leaving_by_keys_asks_first_then_reveals_the_role(hub: Hub) -> None:
    options = custom(RoleId.EVIL, RoleId.SEER, RoleId.FILLER, RoleId.FILLER, RoleId.FILLER)
    game_id, sessions = await seat_callers(hub, options, 5)
    await started(sessions)
    role = by_role(hub, game_id, sessions)
    leaver = role[RoleId.FILLER]
    seat = house(leaver)
    await press(leaver, "#9")
    assert heard(leaver, t("phone.game.leave_confirm"))
    await press(leaver, "2")
    assert heard(leaver, t("phone.game.stay"))
    await press(leaver, "#9")
    await press(leaver, "1")
    assert heard(leaver, t("phone.game.leaving"))
    assert leaver.game_id is None
    state = hub.actors[game_id].state
    assert state is not None and not state.player(seat).alive and state.player(seat).revealed
    subscribers = hub.actors[game_id].subscribers
    assert all(sub.viewer != Viewer.player(seat) for sub in subscribers)
    for session in sessions:
        await session.close()


async def _night_two_walk(hub: Hub, kill_seer: bool) -> tuple[list[str], PhoneSession]:
    """A 4-seat table (evil, seer, two villagers): one villager by phone, the rest act through
    the hub (as browser players would). Night 1 kills the seer or the other villager."""
    options = custom(RoleId.EVIL, RoleId.SEER, RoleId.FILLER, RoleId.FILLER)
    founded = await hub.found(options, private=True, host_account_id=None, channel="web")
    game_id = founded.game.id
    others = [
        await hub.join(game_id, account_id=None, name=f"Web {i}", channel="web") for i in range(3)
    ]
    assert founded.invitation_code is not None
    listener = await call_in(hub)
    await press(listener, "2")
    await press(listener, "2")
    await press(listener, phone_code(founded.invitation_code) + "#")
    await started([listener])
    state = hub.actors[game_id].state
    assert state is not None
    seats = {p.role: p.seat for p in state.players}
    me = house(listener)
    if state.player(me).role is not RoleId.FILLER:
        return [], listener  # the deal gave the phone a role with its own step: try again
    other_villager = next(p.seat for p in state.players if p.role is RoleId.FILLER and p.seat != me)
    victim = seats[RoleId.SEER] if kill_seer else other_villager
    assert others
    await hub.submit(game_id, UseAbility(seats[RoleId.EVIL], ActionKind.EVIL_VOTE, victim))
    await advance(hub, game_id)  # -> morning
    await advance(hub, game_id)  # -> day (nobody nominated)
    mark = len(listener.spoken())
    await advance(hub, game_id)  # -> no vote -> night 2
    state = hub.actors[game_id].state
    assert state is not None and state.phase is Phase.NIGHT and state.round == 2
    lines = listener.spoken()[mark:]
    start = next(i for i, line in enumerate(lines) if line.startswith("Nacht 2"))
    return lines[start:], listener


async def test_the_night_walk_is_the_same_whether_the_seer_lives_or_not(
    hub: Hub, tmp_path: Path
) -> None:
    walks = {}
    for kill_seer in (True, False):
        for _attempt in range(20):
            walk, listener = await _night_two_walk(hub, kill_seer)
            if walk:
                break
            await listener.close()
        assert walk, "no deal gave the phone caller a villager"
        walks[kill_seer] = walk
        audio = await listener.prompts.drain()
        assert len(audio) > 0
        await listener.close()
    assert walks[True] == walks[False]
    assert t("phone.night.step.seer") in walks[True]
    assert t("phone.night.step.evil") in walks[True]
    # The same words take the same time with the real voice too.
    need("espeak-ng", "sox")
    voice = EspeakVoice(tmp_path / "prompts")
    lengths = {k: [len(voice.render(line, "de")) for line in w] for k, w in walks.items()}
    assert lengths[True] == lengths[False] and sum(lengths[True]) > 8000 * 5


async def test_a_known_caller_who_dropped_goes_back_to_the_seat_with_4(hub: Hub) -> None:
    account = await create_account(hub.sessions, "Ottilie", "correct horse battery staple")
    await set_account_pin(hub.sessions, account.id, "8642")
    await verified_number(hub, account.id, "+4989777")
    options = custom(RoleId.EVIL, RoleId.SEER, RoleId.FILLER, RoleId.FILLER)
    founded = await hub.found(options, private=False, host_account_id=None, channel="web")
    caller = await call_in(hub, "+4989777")
    await press(caller, "8642#")  # the number pre-fills the phone ID; the PIN is asked
    await press(caller, "1")
    await press(caller, "1#")
    await press(caller, "1#")
    for i in range(3):
        await hub.join(founded.game.id, account_id=None, name=f"Web {i}", channel="web")
    await started([caller])
    seat = house(caller)
    await caller.close()
    again = await call_in(hub, "+4989777")
    await press(again, "8642#")
    assert heard(again, t("phone.menu.rejoin", n=seat))
    await press(again, "4")
    assert again.seat == seat and again.game_id == founded.game.id
    assert heard(again, "Deine Rolle in diesem Spiel")
    assert hub.presence.connected(founded.game.id, seat)
    await again.close()


async def test_one_key_two_actions_the_witch_is_asked_heal_or_poison(hub: Hub) -> None:
    options = custom(RoleId.EVIL, RoleId.WITCH, RoleId.FILLER, RoleId.FILLER, RoleId.FILLER)
    game_id, sessions = await seat_callers(hub, options, 5)
    await started(sessions)
    role = by_role(hub, game_id, sessions)
    evil, witch = role[RoleId.EVIL], role[RoleId.WITCH]
    victim = next(s for s in sessions if s not in (evil, witch))
    await press(evil, f"{house(victim)}#")
    assert heard(witch, f"Hausnummer {house(victim)}")  # the witch learns the victim
    mark = len(said(witch))
    await press(witch, f"{house(victim)}#")
    assert said(witch, mark) == [
        t("phone.choose", list="1 für Heiltrank; 2 für Gift"),
    ]
    await press(witch, "1")
    assert heard(witch, f"Dein Heiltrank rettet Hausnummer {house(victim)}", mark)
    await press(witch, f"{house(evil)}#")  # a second potion the same night: refused, with why
    assert heard(witch, t("reject.one_potion_per_night"), mark) or heard(
        witch, t("reject.already_acted"), mark
    )
    assert said(witch)[-1] == t("phone.help_hint")  # the reason, then where help is
    await advance(hub, game_id)
    assert heard(victim, t("event.morning_report.nobody", round=1)) or not heard(
        victim, t("phone.game.dead")
    )
    for session in sessions:
        await session.close()


@pytest.mark.rule("S14", "S8")
async def test_hash_alone_means_nobody_for_the_vagabond_and_the_necromancer(hub: Hub) -> None:
    options = custom(RoleId.EVIL, RoleId.VAGABOND, RoleId.FILLER, RoleId.FILLER)
    game_id, sessions = await seat_callers(hub, options, 4)
    await started(sessions)
    vagabond = by_role(hub, game_id, sessions)[RoleId.VAGABOND]
    assert heard(vagabond, "Zuerst ist Landstreicher an der Reihe")
    assert heard(vagabond, t("phone.can.ability_nobody"))
    vagabond.keys.timeout_s = 0.2
    vagabond.on_key("#")  # "# alone": a pause completes it
    await wait_until(lambda: heard(vagabond, "Du lässt heute Nacht alle in Ruhe"), 5)
    for session in sessions:
        await session.close()

    options = custom(RoleId.EVIL, RoleId.NECROMANCER, RoleId.FILLER, RoleId.FILLER)
    game_id, sessions = await seat_callers(hub, options, 4)
    await started(sessions)
    necromancer = by_role(hub, game_id, sessions)[RoleId.NECROMANCER]
    await press(necromancer, "##")
    assert heard(necromancer, "Heute Nacht lässt du die Toten ruhen")
    for session in sessions:
        await session.close()
