"""What a caller hears first: prompt classes, the ring alert's latency at the session's frame
output, short prompts, silence re-prompts, expert mode — on a real hub, keys only."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import numpy as np
import pytest

from tests.needs import need
from vollmond.engine.standard import AnswerCall, PlaceCall, UseAbility, Vote
from vollmond.engine.standard.types import ActionKind, Phase, RoleId
from vollmond.i18n import text
from vollmond.phone.caller import CallerId
from vollmond.phone.session import EspeakVoice, PhoneSession
from vollmond.phone.session.codes import phone_code
from vollmond.phone.session.prefs import expert_for
from vollmond.phone.session.prompts import FRAME_SAMPLES, Priority, PromptQueue, tones
from vollmond.service.hub import Hub
from vollmond.settings import PhoneSettings
from vollmond.store import create_account, set_account_pin
from vollmond.worlds import get_world

from .support import TextVoice, call_in, heard, press, said, verified_number, wait_until
from .test_game import advance, by_role, custom, house, seat_callers, started

W = get_world("werwolf")
RING_ALERT_LIMIT_S = 0.3


def t(key: str, **params: object) -> str:
    return text(key, "de", W, **params)  # type: ignore[arg-type]


def playing(queue: PromptQueue) -> str | None:
    head = queue.playing
    return None if head is None else head.text or head.tone


async def play(queue: PromptQueue, frames: int) -> None:
    await queue.rendered()
    for _ in range(frames):
        queue.next_frame()


# -- the queue ---------------------------------------------------------------------------------
async def test_urgent_cuts_menus_and_help_and_news_is_heard_again_after_it() -> None:
    queue = PromptQueue(TextVoice(), "de")
    queue.say("Hilfe zum Menü", Priority.HELP)
    queue.say("Das Menü")
    await play(queue, 3)  # the help is playing
    queue.say("Morgenbericht", Priority.NEWS)
    assert playing(queue) == "Morgenbericht"  # news cut the help that was playing
    await play(queue, 3)
    queue.play("incoming_ring", tones.incoming_ring(1), Priority.ALERT)
    queue.say("Hausnummer 2 ruft dich an", Priority.ALERT)
    # The ring is the very next frame; the menu is gone, the news starts again afterwards.
    frame = queue.next_frame()
    assert frame is not None and np.array_equal(frame, tones.incoming_ring(1)[:FRAME_SAMPLES])
    rest = [u.text or u.tone for u in queue.queued]
    assert rest == ["incoming_ring", "Hausnummer 2 ruft dich an", "Morgenbericht"]
    assert queue.queued[-1].played == 0
    queue.say("Noch eine Nachricht", Priority.NEWS)
    queue.say("Nächstes Menü")
    queue.say("Deine Stimme bitte", Priority.URGENT)
    order = [u.text or u.tone for u in queue.queued]
    assert order == [
        "incoming_ring",
        "Hausnummer 2 ruft dich an",
        "Deine Stimme bitte",
        "Morgenbericht",
        "Noch eine Nachricht",
    ]  # urgent before news, news in order, the menu queued before the urgent prompt is cut
    await queue.rendered()
    while playing(queue) != "Deine Stimme bitte":
        queue.next_frame()
    queue.next_frame()  # the urgent prompt is playing
    queue.play("incoming_ring", tones.incoming_ring(1), Priority.ALERT)
    assert playing(queue) == "incoming_ring"  # an alert goes before a playing urgent prompt
    assert [u.text or u.tone for u in queue.queued][:2] == ["incoming_ring", "Deine Stimme bitte"]
    assert queue.queued[1].played == 0


# -- the ring alert ----------------------------------------------------------------------------
async def ring_latency(hub: Hub, game_id: str, caller: PhoneSession, callee: PhoneSession) -> float:
    """Place a call and take the callee's 20 ms frames in real time, as the media clock does,
    until the first frame of the ring; returns the seconds from placing to hearing it."""
    first_ring = tones.incoming_ring(1)[:FRAME_SAMPLES]
    placed = time.monotonic()
    outcome = await hub.submit(game_id, PlaceCall(house(caller), house(callee)))
    assert not hasattr(outcome, "reason"), outcome
    while time.monotonic() - placed < 3.0:
        frame = callee.next_frame()
        if frame is not None and np.array_equal(frame, first_ring):
            return time.monotonic() - placed
        await asyncio.sleep(0.02)  # the media clock: one frame per 20 ms
    raise AssertionError("the ring was not heard within 3 s")


async def test_the_ring_alert_reaches_the_callee_within_300_ms_whatever_plays(hub: Hub) -> None:
    """Twice: while the callee (the seer, who has a turn tonight) hears the urgent start of
    their night, and while they hear help (``#1``) queued behind the night walk."""
    options = custom(RoleId.EVIL, RoleId.SEER, RoleId.FILLER, RoleId.FILLER, RoleId.FILLER)
    game_id, sessions = await seat_callers(hub, options, 5)
    await started(sessions)
    callee = by_role(hub, game_id, sessions)[RoleId.SEER]
    first, second = [s for s in sessions if s is not callee][:2]
    await callee.prompts.rendered()
    for _ in range(5):
        callee.next_frame()
    head = callee.prompts.playing
    assert head is not None and head.priority is Priority.URGENT
    during_urgent = await ring_latency(hub, game_id, first, callee)
    await hub.submit(game_id, AnswerCall(house(callee), accept=False))
    # The callee hears the refusal in the first person; the caller hears who declined.
    assert said(callee)[-1] == t("phone.game.you_declined")
    assert heard(first, f"Hausnummer {house(callee)} hat den Anruf abgelehnt")
    await press(callee, "#1")  # help: long, queued behind the night walk
    await callee.prompts.rendered()
    while (head := callee.prompts.playing) is not None and head.priority is not Priority.HELP:
        callee.next_frame()  # listen until the help is what plays
    assert callee.prompts.playing is not None
    during_help = await ring_latency(hub, game_id, second, callee)
    print(
        f"ring alert latency at the frame output: {during_urgent * 1000:.0f} ms during the "
        f"night's start, {during_help * 1000:.0f} ms during help"
    )
    assert during_urgent <= RING_ALERT_LIMIT_S and during_help <= RING_ALERT_LIMIT_S
    assert heard(callee, "ruft dich an")
    for session in sessions:
        await session.close()


async def test_a_past_turn_is_withdrawn_so_a_later_urgent_prompt_is_not_held_back(
    hub: Hub,
) -> None:
    """Phases that pass faster than the line speaks (everyone acted, a test skipping) must not
    pile up urgent prompts: the night's start is game news for whoever has no step tonight,
    and a turn's keys and time left are withdrawn when the next phase begins. Otherwise an
    urgent prompt (the recording warning) waits, first in first out, behind every past turn —
    a minute of it on real audio, longer than the recorder waits for the warning."""
    options = custom(RoleId.EVIL, RoleId.SEER, RoleId.FILLER, RoleId.FILLER)
    game_id, sessions = await seat_callers(hub, options, 4)
    await started(sessions)
    role = by_role(hub, game_id, sessions)
    seer, filler = role[RoleId.SEER], role[RoleId.FILLER]
    night_start = t("phone.night.start", round=1)
    assert [u.priority for u in seer.prompts.queued if u.text == night_start] == [Priority.URGENT]
    filler_night = [u for u in filler.prompts.queued if (u.text or "").startswith("Nacht 1")]
    assert filler_night and all(u.priority is Priority.NEWS for u in filler_night)
    actor = hub.actors[game_id]
    while actor.state is not None and actor.state.phase is not Phase.DAY:
        await advance(hub, game_id)  # nobody's line has played a frame meanwhile
    for session in sessions:
        session.prompts.say("Warnung", Priority.URGENT)
        queued = session.prompts.queued
        ahead = queued[: next(i for i, u in enumerate(queued) if u.text == "Warnung")]
        urgent = [u.text for u in ahead if u.priority <= Priority.URGENT]
        assert urgent, session.seat  # the day's own turn: its start, keys and time left
        assert all(u.tag == "turn" for u in ahead if u.priority <= Priority.URGENT)
        assert night_start not in urgent
        assert sum(1 for text_ in urgent if (text_ or "").startswith("Noch ")) <= 1
    for session in sessions:
        await session.close()


# -- brevity -----------------------------------------------------------------------------------
async def test_a_wrong_key_gets_one_line_and_the_help_hint_and_help_is_long(hub: Hub) -> None:
    session = await call_in(hub)
    assert said(session)[-1] == t("phone.ident.choices")
    await press(session, "2")
    assert said(session)[-1] == t("phone.menu.choices")
    before = len(said(session))
    await press(session, "9#")  # (8 accepts a friend's invitation)
    assert said(session, before) == [t("phone.menu.no_choice", n=9), t("phone.help_hint")]
    await press(session, "#1")
    assert said(session)[-1] == t("phone.menu.choices_long")
    assert len(t("phone.menu.choices")) * 2 < len(t("phone.menu.choices_long"))
    assert session.transcript[-1].priority is Priority.HELP
    await session.close()


async def test_a_returning_caller_with_a_seat_hears_4_first(hub: Hub) -> None:
    account = await create_account(hub.sessions, "ruth", "correct horse battery ruth")
    await set_account_pin(hub.sessions, account.id, "1357")
    await verified_number(hub, account.id, "+4930555")
    options = custom(RoleId.EVIL, RoleId.SEER, RoleId.FILLER, RoleId.FILLER)
    founded = await hub.found(options, private=True, host_account_id=None, channel="web")
    for i in range(3):
        await hub.join(founded.game.id, account_id=None, name=f"Web {i}", channel="web")
    await hub.join(founded.game.id, account_id=account.id, name="ruth", channel="web")
    await wait_until(lambda: founded.game.id in hub.actors)
    session = await call_in(hub, "+4930555")
    mark = len(said(session))
    await press(session, "1357#")
    after_pin = said(session, mark)
    assert after_pin[0].startswith("Tippe 4 für dein Spiel, Hausnummer")
    await press(session, "4")
    assert session.game_id == founded.game.id
    await session.close()


# -- silence -----------------------------------------------------------------------------------
async def listen(session: PhoneSession) -> None:
    """Play out everything queued, as the line would (the silence counts from then). A live
    line rendered again when it starts gives silence until its audio is there: wait for it,
    as the line's clock would, instead of spinning on silent frames."""
    while True:
        await session.prompts.rendered()
        while session.next_frame() is not None:
            if any(not u.ready() for u in session.prompts.queued):
                break
        else:
            return


async def test_silence_reminds_three_times_then_the_announcer_says_goodbye(hub: Hub) -> None:
    session = await call_in(hub, phone=PhoneSettings(silence_s=0.05))
    await press(session, "2")
    for n in range(1, 4):
        await listen(session)
        await wait_until(lambda: session.prompts.busy, 2.0)
        assert said(session)[-1] == t("phone.reminder", keys=t("phone.menu.choices")), n
        assert session.reminded == n
    assert not session.hangup_requested.is_set()
    await listen(session)
    await asyncio.wait_for(session.hangup_requested.wait(), 2.0)
    assert said(session)[-2:] == [t("phone.reminder_end"), t("phone.goodbye")]
    # Both are still to be heard: the goodbye must not cut "Ich höre nichts mehr".
    assert [u.text for u in session.prompts.queued] == said(session)[-2:]
    await session.close()


async def test_a_key_resets_the_reminders_and_a_seat_in_the_lobby_is_never_hung_up(
    hub: Hub,
) -> None:
    session = await call_in(hub, phone=PhoneSettings(silence_s=0.05))
    await press(session, "2")
    await listen(session)
    await wait_until(lambda: session.reminded == 1, 2.0)
    await press(session, "2")  # join by code: a key resets the count
    assert session.reminded == 0
    await listen(session)
    await wait_until(lambda: session.reminded == 1, 2.0)
    assert said(session)[-1] == t("phone.reminder", keys=t("phone.menu.ask_code"))
    await press(session, "0#")
    options = custom(RoleId.EVIL, RoleId.SEER, RoleId.FILLER, RoleId.FILLER)
    founded = await hub.found(options, private=False, host_account_id=None, channel="web")
    assert founded.game.id
    await press(session, "1")
    await press(session, "1#")
    await press(session, "1#")  # a seat at the table: waiting is not silence
    assert session.game_id == founded.game.id
    # With a 50 ms silence, a reminder of the table list may fall into the moment the seat is
    # stored (a loaded machine); from the seat on, the count must not grow.
    await listen(session)
    seated = session.reminded
    await asyncio.sleep(0.3)  # six silence periods: nothing may be said
    assert not session.prompts.busy and session.reminded == seated <= 1
    await session.close()


async def test_in_a_game_the_reminder_names_what_is_left_to_do_and_the_time(hub: Hub) -> None:
    options = custom(RoleId.EVIL, RoleId.SEER, RoleId.FILLER, RoleId.FILLER)
    game_id, sessions = await seat_callers(hub, options, 4)
    await started(sessions)
    role = by_role(hub, game_id, sessions)
    seer, filler = role[RoleId.SEER], role[RoleId.FILLER]
    for session in sessions:
        session.silence_s = 0.05
        await listen(session)
    await wait_until(lambda: seer.reminded == 1, 2.0)
    reminder = said(seer)[-1]
    assert reminder.startswith("Bist du noch da? Prüfen: Hausnummer und Raute")
    assert "Sekunden" in reminder
    await listen(filler)
    await asyncio.sleep(0.2)
    assert filler.reminded == 0  # nothing to do: nothing to remind
    for session in sessions:
        await session.close()


# -- expert mode -------------------------------------------------------------------------------
async def test_star_7_toggles_expert_mode_kept_for_the_identity(hub: Hub) -> None:
    account = await create_account(hub.sessions, "eve", "correct horse battery eve")
    await set_account_pin(hub.sessions, account.id, "2468")
    await verified_number(hub, account.id, "+4930777")
    session = await call_in(hub, "+4930777")
    await press(session, "2468#")
    assert heard(session, t("phone.ident.welcome", name="eve"))
    await press(session, "*7#")
    assert session.expert and said(session)[-1] == t("phone.expert_on")
    await session.close()
    again = await call_in(hub, "+4930777")
    await press(again, "2468#")
    assert again.expert
    assert said(again)[-1] == t("phone.menu.choices")
    assert not heard(again, t("phone.ident.welcome", name="eve"))  # only the essentials
    await press(again, "*7#")
    assert said(again)[-1] == t("phone.expert_off")
    assert not await expert_for(hub, again.identity_id)
    await again.close()


async def test_in_expert_mode_the_night_walk_is_left_out(hub: Hub) -> None:
    options = custom(RoleId.EVIL, RoleId.SEER, RoleId.FILLER, RoleId.FILLER)
    game_id, sessions = await seat_callers(hub, options, 4)
    await started(sessions)
    expert, plain = sessions[0], sessions[1]
    await press(expert, "*7#")
    await advance(hub, game_id)  # morning
    await advance(hub, game_id)  # day
    await advance(hub, game_id)  # vote (nobody nominated: on to the night)
    state = hub.actors[game_id].state
    assert state is not None and state.phase is Phase.NIGHT and state.round == 2
    step = t("phone.night.step.seer")
    assert said(plain).count(step) == 2 and said(expert).count(step) == 1
    for session in sessions:
        await session.close()


# -- fixes -------------------------------------------------------------------------------------
@pytest.mark.rule("D3")
async def test_one_nominee_is_singular_and_a_dead_players_hash_9_leaves(hub: Hub) -> None:
    options = custom(RoleId.EVIL, RoleId.SEER, RoleId.FILLER, RoleId.FILLER, RoleId.FILLER)
    game_id, sessions = await seat_callers(hub, options, 5)
    await started(sessions)
    role = by_role(hub, game_id, sessions)
    evil, seer = role[RoleId.EVIL], role[RoleId.SEER]
    await hub.submit(game_id, UseAbility(house(evil), ActionKind.EVIL_VOTE, house(seer)))
    await advance(hub, game_id)  # morning: the seer is dead
    await wait_until(lambda: heard(seer, t("phone.game.dead")))
    await advance(hub, game_id)  # day
    await press(evil, f"{house(role[RoleId.FILLER])}#")  # one nominee
    await advance(hub, game_id)  # vote
    assert heard(evil, f"Zur Wahl steht Hausnummer {house(role[RoleId.FILLER])}.")
    assert not any(line[:1].islower() for s in sessions for line in said(s))
    await hub.submit(game_id, Vote(house(evil), None))
    await press(seer, "#9")
    assert said(seer)[-2] == t("phone.game.leaving")
    assert not heard(seer, t("phone.menu.game_over"))
    assert seer.game_id is None
    for session in sessions:
        await session.close()


@pytest.mark.rule("S19")
async def test_a_flood_of_stars_and_hashes_interjects_nothing(hub: Hub) -> None:
    options = custom(RoleId.EVIL, RoleId.SEER, RoleId.FILLER, RoleId.FILLER)
    game_id, sessions = await seat_callers(hub, options, 4)
    await started(sessions)
    await advance(hub, game_id)  # morning
    await advance(hub, game_id)  # day: interjections are possible
    flooder = next(s for s in sessions if s.seat is not None)
    flooder.keys.flood_gap_s = 0.5
    await press(flooder, "****#")  # "***" is an error; its burst's "*#" is no interjection
    state = hub.actors[game_id].state
    assert state is not None and state.today().floor is None
    flooder.keys.flood_gap_s = 0.0  # the same keys typed after a pause: "*#" interjects
    await press(flooder, "****#")
    state = hub.actors[game_id].state
    assert state is not None and state.today().floor == flooder.seat
    for session in sessions:
        await session.close()


# -- founding options by phone ------------------------------------------------------------------
@pytest.mark.rule("W3", "W6", "W7", "C8", "C9")
async def test_a_phone_founder_picks_deck_options_calls_by_day_and_durations(hub: Hub) -> None:
    host = await call_in(hub)
    await press(host, "2")
    await press(host, "00#")
    await press(host, "1#")  # the standard rules
    await press(host, "1#")
    await press(host, "7#")
    assert said(host)[-1] == t("phone.found.start")
    await press(host, "2")  # own settings
    assert said(host)[-1].startswith("Deck: 1 Wie es kommt; 2 Dorffest; 3 Fuchsbau")
    await press(host, "9#")
    assert said(host)[-2:] == [t("phone.menu.no_choice", n=9), t("phone.help_hint")]
    await press(host, "2#")  # Dorffest
    assert said(host)[-1] == t("phone.found.extras")
    await press(host, "45#")  # calls by day and no calls: contradictory
    assert said(host)[-1] == t("phone.help_hint")
    await press(host, "124#")  # einstimmig, Sofort-Mord, calls by day
    assert said(host)[-1] == t("phone.found.day_mode")
    await press(host, "2")  # Halbmodus only
    assert said(host)[-1] == t("phone.found.night", n=120)
    await press(host, "99999#")
    assert said(host)[-2] == t("phone.found.duration_bounds", min=1, max=3600)
    await press(host, "60#")
    assert said(host)[-1] == t("phone.found.day", n=180)
    await press(host, "0#")  # the standard day
    assert host.game_id is not None
    table = await hub.table(host.game_id)
    engine = table.game.options["engine"]
    assert engine["deck"] == "starter" and engine["players"] == 7
    assert engine["unanimous"] is True and engine["instant_kill"] is True
    assert engine["calls"]["by_day"] is True and engine["calls"]["day_modes"] == "halb"
    assert engine["durations"]["night_s"] == 60.0 and engine["durations"]["day_s"] == 180.0
    assert engine["lovers"] is None
    await press(host, "#9")
    await press(host, "00#")
    await press(host, "1#")  # the standard rules
    await press(host, "1#")
    await press(host, "5#")
    await press(host, "2")
    await press(host, "1#")
    await press(host, "35#")  # lovers, no calls
    assert said(host)[-1] == t("phone.found.night", n=120)
    await press(host, "0#")
    await press(host, "0#")
    assert host.game_id is not None
    engine = (await hub.table(host.game_id)).game.options["engine"]
    assert engine["lovers"] is True and engine["calls"]["enabled"] is False
    assert engine["deck"] == "auto" and engine["durations"]["night_s"] == 120.0
    await host.close()


# -- a guest's seat code -----------------------------------------------------------------------
def spoken_seat_code(session: PhoneSession) -> str:
    line = next(line for line in said(session) if line.startswith("Dein Sitzcode ist "))
    return "".join(ch for ch in line.split(".")[0] if ch.isdigit())


async def test_a_guest_returns_to_the_seat_with_4_and_the_seat_code(hub: Hub) -> None:
    options = custom(RoleId.EVIL, RoleId.SEER, RoleId.FILLER, RoleId.FILLER)
    founded = await hub.found(options, private=True, host_account_id=None, channel="web")
    assert founded.invitation_code is not None
    digits = phone_code(founded.invitation_code)
    guest = await call_in(hub, "+4930111")
    await press(guest, "2")
    await press(guest, "2")
    await press(guest, digits + "#")
    code = spoken_seat_code(guest)
    assert len(code) == 5
    await guest.close()  # the call drops at the table, before the start
    back = await call_in(hub, "+4930111")
    await press(back, "2")
    await press(back, "4")
    assert said(back)[-1] == t("phone.menu.ask_seat_code")
    await press(back, code + "#")
    assert back.game_id == founded.game.id and back.announcer.state == "lobby"
    assert len((await hub.table(founded.game.id)).seats) == 1  # the same seat, not a new one
    for i in range(2):
        await hub.join(founded.game.id, account_id=None, name=f"Web {i}", channel="web")
    await hub.join(founded.game.id, account_id=None, name="Web 3", channel="web")
    await started([back])
    seat = back.seat
    await back.close()  # and drops again in the running game
    third = await call_in(hub, "+4930111")
    await press(third, "2")
    await press(third, "4")
    wrong = "0" if code[0] != "0" else "1"
    await press(third, wrong + code[1:] + "#")
    assert said(third)[-2:] == [t("phone.menu.seat_code_unknown"), t("phone.help_hint")]
    await press(third, code + "#")
    assert third.seat == seat and third.game_id == founded.game.id
    await third.close()


async def test_seat_codes_are_rate_limited_per_call_and_per_source(hub: Hub) -> None:
    for call in range(4):
        session = await call_in(hub, CallerId("+4930222", None, "198.51.100.9"))
        await press(session, "2")
        await press(session, "4")
        for _ in range(3):
            await press(session, "12345#")
        await press(session, "54321#")
        assert heard(session, t("phone.menu.code_limit")), call
        await session.close()
    # Ten wrong codes from this address in the hour: the next call is refused at once.
    blocked = await call_in(hub, CallerId("+4930223", None, "198.51.100.9"))
    await press(blocked, "2")
    await press(blocked, "4")
    await press(blocked, "11111#")
    assert said(blocked)[-2] == t("phone.menu.code_limit")
    await blocked.close()


async def test_a_caller_can_act_within_15_s_of_the_nights_start(hub: Hub, tmp_path: Path) -> None:
    """With the real voice: everything a seer hears before their own keys are complete — the
    night's first line, "Du bist an der Reihe", the keys and the time left — lasts under 15 s."""
    need("espeak-ng", "sox")
    voice = EspeakVoice(tmp_path / "cache")
    options = custom(RoleId.EVIL, RoleId.SEER, RoleId.FILLER, RoleId.FILLER)
    founded = await hub.found(options, private=True, host_account_id=None, channel="web")
    assert founded.invitation_code is not None
    sessions = []
    for n in range(4):
        session = await call_in(hub, f"+4930600{n}", voice=voice)  # type: ignore[arg-type]
        await press(session, "2")
        await press(session, "2")
        await press(session, phone_code(founded.invitation_code) + "#")
        sessions.append(session)
    await started(sessions)
    seer = by_role(hub, founded.game.id, sessions)[RoleId.SEER]
    await seer.prompts.rendered()
    queued = seer.prompts.queued
    night = next(i for i, u in enumerate(queued) if u.text == t("phone.night.start", round=1))
    keys_end = next(
        i for i, u in enumerate(queued) if (u.text or "").startswith("Noch ") and i > night
    )
    walk = queued[night : keys_end + 1]
    assert all(u.ready() for u in walk)
    seconds = sum(len(u.audio) for u in walk if u.audio is not None) / 8000
    print(f"a seer can act {seconds:.1f} s after the night's first word")
    assert seconds <= 15.0
    assert [u.priority for u in queued[night : keys_end + 1]] == [Priority.URGENT] * (
        keys_end + 1 - night
    )
    for session in sessions:
        await session.close()
