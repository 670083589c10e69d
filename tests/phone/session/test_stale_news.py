"""Nothing stale at a phase change: what describes a phase is dropped once it is over, a timer
line says the time left when it is heard, and what stays true (a role, a death) is kept.

Short phases pass faster than a line speaks; before, a caller heard the welcome, the night's
narration and "noch 299 Sekunden" a minute into the day, and could not hear the market place
(news is not cut by a key). The test plays the clock itself: no frame is played while the
phases pass, as on a line that is still talking.
"""

from __future__ import annotations

import asyncio
import time

from vollmond.engine.standard import AnswerCall, PlaceCall, UseAbility
from vollmond.engine.standard.options import Durations
from vollmond.engine.standard.types import ActionKind, Phase, RoleId
from vollmond.phone.session import PhoneSession
from vollmond.phone.session.codes import phone_code
from vollmond.phone.session.prompts import FRAME_SAMPLES, Priority, PromptQueue
from vollmond.phone.session.prompts.voice import Audio
from vollmond.service.hub import Hub

from .support import SAMPLES_PER_CHAR, TextVoice, call_in, press
from .test_game import advance, by_role, custom, house, started
from .test_priorities import W, t

DAY_S = Durations().day_s


# -- the queue ---------------------------------------------------------------------------------
def timer(now: list[float], end: float) -> str | None:
    left = int(end - now[0])
    return None if left < 5 else f"Noch {left} Sekunden."


async def test_a_live_line_is_said_for_the_moment_it_plays() -> None:
    now = [100.0]
    voice = TextVoice()
    queue = PromptQueue(voice, "de")
    queue.say("Der Morgenbericht", Priority.NEWS)
    words = timer(now, 190.0)
    assert words == "Noch 90 Sekunden."
    queue.say(words, Priority.NEWS, refresh=lambda: timer(now, 190.0))
    await queue.rendered()
    now[0] = 130.0  # the report before it took half a minute
    await queue.drain()
    assert [text for text, _ in voice.rendered] == [
        "Der Morgenbericht",
        "Noch 90 Sekunden.",
        "Noch 60 Sekunden.",  # rendered again when it reached the head
    ]


class SlowTextVoice(TextVoice):
    """A renderer slower than the clock: a second passes while each line is rendered."""

    def __init__(self, now: list[float]) -> None:
        super().__init__()
        self.now = now

    def render(self, text: str, language: str) -> Audio:
        self.now[0] += 1.0
        return super().render(text, language)


async def test_a_live_line_is_rendered_again_at_most_once_with_a_slow_renderer() -> None:
    now = [100.0]
    voice = SlowTextVoice(now)
    queue = PromptQueue(voice, "de")
    queue.say("Der Morgenbericht", Priority.NEWS)
    queue.say("Noch 90 Sekunden.", Priority.NEWS, refresh=lambda: timer(now, 190.0))
    audio = await asyncio.wait_for(queue.drain(), 5.0)
    rendered = [text for text, _ in voice.rendered]
    # Its words changed while it was rendered again, but it plays: a caller on a busy line hears
    # a timer a second old rather than silence while it is rendered over and over.
    assert rendered == ["Der Morgenbericht", "Noch 90 Sekunden.", "Noch 88 Sekunden."]
    assert len(audio) >= len("Der MorgenberichtNoch 88 Sekunden.") * SAMPLES_PER_CHAR


async def test_a_live_line_with_nothing_true_left_is_dropped() -> None:
    now = [100.0]
    queue = PromptQueue(TextVoice(), "de")
    queue.say("Der Morgenbericht", Priority.NEWS)
    queue.say("Noch 90 Sekunden.", Priority.NEWS, refresh=lambda: timer(now, 190.0))
    now[0] = 188.0
    audio = await queue.drain()
    report = len("Der Morgenbericht") * SAMPLES_PER_CHAR
    assert report <= len(audio) < report + FRAME_SAMPLES  # the report only, no timer


async def test_what_stays_true_is_shortened_when_late_and_a_playing_one_is_heard_out() -> None:
    queue = PromptQueue(TextVoice(), "de")
    queue.say("Deine Rolle: Seherin. Jede Nacht prüfst du ...", Priority.NEWS, tag="role")
    queue.say("Der Morgenbericht", Priority.NEWS)
    assert queue.shorten("role", "Deine Rolle: Seherin.")
    assert [u.text for u in queue.queued] == ["Deine Rolle: Seherin.", "Der Morgenbericht"]
    await queue.rendered()
    queue.next_frame()  # the short one plays now
    assert not queue.shorten("role", "Rolle: Seherin.")
    assert [u.text for u in queue.queued] == ["Deine Rolle: Seherin.", "Der Morgenbericht"]


# -- the game lines ----------------------------------------------------------------------------
async def seat_with_clock(hub: Hub, count: int, now: list[float]) -> tuple[str, list[PhoneSession]]:
    """A private round with `count` phone callers whose sessions run on a clock the test can
    move forward (`now[0]` seconds on top of the real one)."""
    options = custom(
        RoleId.EVIL,
        RoleId.SEER,
        RoleId.FILLER,
        RoleId.FILLER,
    )
    founded = await hub.found(options, private=True, host_account_id=None, channel="web")
    assert founded.invitation_code is not None
    sessions = []
    for i in range(count):
        session = await call_in(hub, f"+4930200{i}", clock=lambda: time.monotonic() + now[0])
        await press(session, "2")  # guest
        await press(session, "2")  # join by code
        await press(session, phone_code(founded.invitation_code) + "#")
        sessions.append(session)
    await started(sessions)
    return founded.game.id, sessions


def seconds(line: str | None) -> int:
    """The number of "Noch N Sekunden."."""
    assert line is not None
    return int(line.split()[1])


def queued(session: PhoneSession) -> list[str]:
    return [u.text for u in session.prompts.queued if u.text is not None]


async def test_at_daybreak_the_nights_news_is_gone_and_deaths_and_roles_are_kept(
    hub: Hub,
) -> None:
    now = [0.0]
    game_id, sessions = await seat_with_clock(hub, 4, now)
    role = by_role(hub, game_id, sessions)
    evil, seer = role[RoleId.EVIL], role[RoleId.SEER]
    filler = role[RoleId.FILLER]
    assert any(text.startswith("Willkommen") for text in queued(filler))
    assert any(text.startswith("Nacht 1") for text in queued(filler))
    await hub.submit(game_id, UseAbility(house(evil), ActionKind.EVIL_VOTE, house(seer)))
    now[0] = 30.0
    await advance(hub, game_id)  # morning
    await advance(hub, game_id)  # day
    state = hub.actors[game_id].state
    assert state is not None and state.phase is Phase.DAY
    for session in sessions:
        texts = queued(session)
        stale = [
            text
            for text in texts
            if text.startswith(("Willkommen", "Nacht 1", "Der Morgen graut"))
            or text.endswith(t("phone.night.step.evil"))
        ]
        assert stale == [], session.seat
        # Still true, but late: the role's name only (#5 explains it), not the explanation.
        role = hub.actors[game_id].state.player(house(session)).role  # type: ignore[union-attr]
        assert t("phone.game.role_short", role=W.role_name(role.value, "de")) in texts
        assert not any(text.startswith("Deine Rolle in diesem Spiel") for text in texts)
        assert any(text.startswith("Diese Nacht nicht überlebt") for text in texts)
        assert any(text.startswith("Tag 1") for text in texts)
        timers = [text for text in texts if text.startswith("Noch ")]
        assert len(timers) <= 1  # the night's time left went with the night
    # The day's time left is said as it is when heard: 100 s later, 100 s less.
    day_timer = next(u for u in filler.prompts.queued if (u.text or "").startswith("Noch "))
    assert DAY_S - 3 <= seconds(day_timer.text) <= DAY_S
    now[0] += 100.0
    await filler.prompts.rendered()
    while filler.prompts.playing is not day_timer:
        filler.next_frame()
    filler.next_frame()
    await filler.prompts.rendered()
    assert DAY_S - 103 <= seconds(day_timer.text) <= DAY_S - 100
    for session in sessions:
        await session.close()


async def test_a_ring_that_ended_is_not_announced_any_more(hub: Hub) -> None:
    """The callee answers while "Hausnummer N ruft dich an" is still queued behind what plays
    (here: it is never played at all); once the call stands, neither side hears the ring's
    words any more, only what became of the call."""
    now = [0.0]
    game_id, sessions = await seat_with_clock(hub, 4, now)
    caller, callee = sessions[:2]
    await hub.submit(game_id, PlaceCall(house(caller), house(callee)))
    ringing = f"Hausnummer {house(caller)} ruft dich an"
    assert any(text.startswith(ringing) for text in queued(callee))
    await hub.submit(game_id, AnswerCall(house(callee), accept=True))
    assert not any(text.startswith(ringing) for text in queued(callee))
    assert not any("klingelt" in text for text in queued(caller))
    assert any("Leitung steht" in text for text in queued(caller))
    for session in sessions:
        await session.close()
