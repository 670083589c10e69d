"""Prompt audio shared by the callers of a node (issue 16, big public games): the same words
are rendered once and the same audio is queued for every caller; other words (another language,
expert mode's shorter prompts, a caller's own secrets) are rendered for whoever has them."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from vollmond.engine.core import Audience, Event
from vollmond.engine.standard import GameOptions
from vollmond.engine.standard.types import DeckId, RoleId
from vollmond.i18n import render_event, text
from vollmond.phone.session import PhoneSession
from vollmond.phone.session.codes import phone_code
from vollmond.phone.session.prompts import Priority, PromptQueue, Renders
from vollmond.phone.session.prompts.voice import Audio
from vollmond.service.hub import Hub
from vollmond.worlds import get_world

from .support import TextVoice, call_in, heard, press, said, wait_until

W = get_world("werwolf")
NEWS = "Hausnummer 5 wurde nominiert."


async def test_one_sentence_for_a_table_of_queues_is_rendered_once() -> None:
    voice = TextVoice()
    renders = Renders(voice)
    table = [PromptQueue(voice, "de", renders=renders) for _ in range(12)]
    english = PromptQueue(voice, "en", renders=renders)
    for queue in [*table, english]:
        queue.say(NEWS, Priority.NEWS)
    await renders.settled()
    assert Counter(voice.rendered) == {(NEWS, "de"): 1, (NEWS, "en"): 1}
    heads = [queue.playing for queue in table]
    assert all(head is not None and head.ready() for head in heads)
    first = heads[0]
    assert first is not None and first.audio is not None and len(first.audio) > 0
    assert all(head is not None and head.audio is first.audio for head in heads)  # one array
    # Later callers get the kept audio at once: nothing to wait for, no render.
    late = PromptQueue(voice, "de", renders=renders)
    late.say(NEWS, Priority.NEWS)
    assert late.playing is not None and late.playing.audio is first.audio
    assert renders.started == 2 and len(voice.rendered) == 2
    whole = [await queue.drain() for queue in [*table, late]]
    assert all(np.array_equal(audio, whole[0]) for audio in whole)


async def test_a_caller_who_drops_a_prompt_does_not_cancel_it_for_the_others() -> None:
    voice = TextVoice()
    renders = Renders(voice)
    menu, news = (PromptQueue(voice, "de", renders=renders) for _ in range(2))
    menu.say(NEWS)  # a menu prompt: a key press drops it
    news.say(NEWS, Priority.NEWS)
    assert menu.interrupt() == 1  # dropped while its (shared) render is still running
    audio = await news.drain()
    assert len(audio) > 0 and voice.rendered == [(NEWS, "de")]


class FlakyVoice(TextVoice):
    """Fails its first render."""

    def render(self, text: str, lang: str) -> Audio:
        if not self.rendered:
            self.rendered.append(("failed", lang))
            raise RuntimeError("the speech program crashed")
        return super().render(text, lang)


async def test_a_failed_render_is_not_kept() -> None:
    voice = FlakyVoice()
    renders = Renders(voice)
    first = PromptQueue(voice, "de", renders=renders)
    first.say(NEWS, Priority.NEWS)
    assert len(await first.drain()) == 0  # the caller hears nothing for it, as before
    second = PromptQueue(voice, "de", renders=renders)
    second.say(NEWS, Priority.NEWS)
    assert len(await second.drain()) > 0 and voice.rendered[-1] == (NEWS, "de")


def test_an_events_words_are_made_once_per_language_world_and_rule_set() -> None:
    renders = Renders(TextVoice())
    nominated = Event("nominated", Audience.public(), {"nominee": 5, "by": 3})
    made: list[tuple[str, str]] = []

    def words(event: Event, lang: str) -> str:
        def make() -> str:
            made.append((event.code, lang))
            return render_event(event, lang, W)

        return renders.words(event, (lang, W.id, "standard"), make)

    table = [words(nominated, "de") for _ in range(12)]
    assert table == [render_event(nominated, "de", W)] * 12 and made == [("nominated", "de")]
    assert words(nominated, "en") == render_event(nominated, "en", W)
    # Equal but another event (another fan-out): its words are made for it.
    again = Event("nominated", Audience.public(), {"nominee": 5, "by": 3})
    assert words(again, "de") == table[0] and len(made) == 3


def test_shared_renders_belong_to_one_voice() -> None:
    with pytest.raises(ValueError, match="another voice"):
        PromptQueue(TextVoice(), "de", renders=Renders(TextVoice()))


async def test_a_table_of_callers_hears_one_render_of_each_sentence(hub: Hub) -> None:
    """Six callers in one game: four in plain German, one in expert mode, one in English. The
    night's start and walk are rendered once for all who hear the same words; the expert's
    shorter night and the English words are theirs; a role is rendered for those dealt it."""
    voice = TextVoice()
    renders = Renders(voice)
    roles = (RoleId.EVIL, RoleId.SEER, *[RoleId.FILLER] * 4)
    options = GameOptions(
        players=len(roles),
        deck=DeckId.CUSTOM,
        custom_roles=tuple((r, roles.count(r)) for r in dict.fromkeys(roles)),
    )
    founded = await hub.found(options, private=True, host_account_id=None, channel="web")
    assert founded.invitation_code is not None
    digits = phone_code(founded.invitation_code)

    async def join(number: str, *, lang: str = "de", expert: bool = False) -> PhoneSession:
        session = await call_in(hub, number, voice=voice, renders=renders, lang=lang)
        await press(session, "2")  # guest
        if expert:
            await press(session, "*7#")
        await press(session, "2")  # join by code
        await press(session, digits + "#")
        return session

    plain = [await join(f"+4930200{i}") for i in range(4)]
    expert = await join("+49302009", expert=True)
    english = await join("+44302000", lang="en")
    sessions = [*plain, expert, english]
    for session in sessions:
        await wait_until(lambda s=session: s.seat is not None)  # type: ignore[misc]
    walk_line = text("phone.night.step.seer", "de", W)
    await wait_until(lambda: all(heard(s, walk_line) for s in plain))
    await renders.settled()

    # Every sentence said to anyone was rendered exactly once, in its caller's language.
    said_by_lang = {(line, s.lang) for s in sessions for line in said(s)}
    assert set(voice.rendered) == said_by_lang
    assert max(Counter(voice.rendered).values()) == 1
    per_caller = sum(len(set(said(s))) for s in sessions)
    assert len(voice.rendered) < per_caller  # what the table shares was rendered once

    # The walk: the four plain callers hear the one render of it (the same audio).
    walks = [u for s in plain for u in s.prompts.queued if u.text == walk_line]
    assert len(walks) == len(plain) and all(u.ready() for u in walks)
    assert all(u.audio is walks[0].audio for u in walks)
    # Expert mode: no walk (its own, shorter prompts); English: its own words and render.
    assert not heard(expert, walk_line)
    english_walk = text("phone.night.step.seer", "en", W)
    assert heard(english, english_walk) and (english_walk, "en") in voice.rendered
    # A role's words reach only the seats dealt it: nobody else was queued (or rendered) them.
    state = hub.actors[founded.game.id].state
    assert state is not None
    seer_seat = next(p.seat for p in state.players if p.role is RoleId.SEER)
    seer = next(s for s in sessions if s.seat == seer_seat)
    own = set(said(seer)) - {line for s in sessions if s is not seer for line in said(s)}
    assert own  # the seer's role and turn
    for session in sessions:
        await session.close()
