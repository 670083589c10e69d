"""End to end (X3, X4): a real baresip caller leaves a voice message for a browser player,
who plays it in Debian's Chromium; a friend invitation sent from the page reaches a caller in
the announcer, and pressing 8 seats them at the table; a caller calls a friend into a
conference room by keys (X2), the friend hears it in the announcer and 8 brings them in.

The service is the real one (uvicorn, store, hub, the real phone sessions); the page is the
real client (community.js), signed up through its own form.
"""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest
from playwright.async_api import Browser, Page, expect

from tests.phone.e2e.conftest import LiveRig
from tests.phone.e2e.support import Phone, level_at, phones, tone, wait_until
from tests.voice.conftest import chromium  # noqa: F401 (the fixture)
from vollmond.phone.media import Int16Array
from vollmond.phone.session import PhoneSession
from vollmond.phone.session.community.common import spoken_name
from vollmond.phone.session.community.friends import FriendsMenu
from vollmond.phone.session.community.mailbox import MailMenu
from vollmond.phone.session.community.recorder import Step
from vollmond.service.community import community_of, names
from vollmond.service.hub import Owner
from vollmond.store import create_phone_identity, find_account

pytestmark = pytest.mark.slow

PASSWORD = "correct horse battery staple"
CALLER = "+4930777"
PIN = "2468"
VOICE_HZ = 440.0
TIMEOUT_MS = 30_000


async def settle(session: PhoneSession, timeout: float = 20.0) -> None:
    async with asyncio.timeout(timeout):
        await session.idle()
        await session.prompts.rendered()


async def signed_up_page(browser: Browser, base: str, name: str) -> Page:
    context = await browser.new_context(base_url=base, locale="de-DE")
    page = await context.new_page()
    await page.goto("/")
    await page.fill("#auth-name", name)
    await page.fill("#auth-password", PASSWORD)
    await page.click("#signup-button")
    await expect(page.locator("#account-label")).to_contain_text(name, timeout=TIMEOUT_MS)
    return page


async def sign_in_by_phone(
    live: LiveRig, phone: Phone, identity_id: int, caller: str = CALLER
) -> PhoneSession:
    await phone.dial(live.sip_port)
    await wait_until(lambda: bool(live.sessions.get(caller)), 15)
    session = live.session(caller)
    await wait_until(lambda: session.t("phone.ident.choices") in session.spoken(), 15)
    await settle(session)
    await phone.keys("1")
    await wait_until(lambda: session.t("phone.ident.ask_id") in session.spoken(), 15)
    await phone.keys(f"{identity_id}#", gap=0.15)
    await wait_until(lambda: session.t("phone.ident.ask_pin") in session.spoken(), 15)
    await phone.keys(f"{PIN}#", gap=0.15)
    await wait_until(lambda: session.identity_id == identity_id, 15)
    await settle(session)
    return session


async def friends(live: LiveRig, name: str, phone_id: int) -> Owner:
    """The browser player and the caller are friends already (asked and accepted)."""
    account = await find_account(live.hub.sessions, name)
    assert account is not None
    anna = Owner.account(account.id)
    box = community_of(live.hub).friends
    await box.ask(anna, Owner.phone(phone_id))
    await box.accept(Owner.phone(phone_id), anna)
    return anna


def dominant_hz(samples: list[float], rate: float) -> float:
    spectrum = np.abs(np.fft.rfft(np.asarray(samples) * np.hanning(len(samples))))
    return float(np.argmax(spectrum) * rate / len(samples))


@pytest.mark.rule("X3", "X4", "X5")
async def test_a_callers_voice_message_is_played_in_chromium(
    live: LiveRig,
    chromium: Browser,  # noqa: F811
) -> None:
    identity = await create_phone_identity(live.hub.sessions, pin=PIN)
    page = await signed_up_page(chromium, live.service.base_url, "Anna")
    await friends(live, "Anna", identity.id)
    voice = tone(VOICE_HZ, 110.0)
    async with phones(live.root / "phones", {CALLER: voice}) as lines:
        session = await sign_in_by_phone(live, lines[CALLER], identity.id)
        await lines[CALLER].keys("7")  # friends: "1 Anna, ..."
        await wait_until(lambda: isinstance(session.mode, FriendsMenu), 15)
        await settle(session)
        await lines[CALLER].keys("1#")  # Anna
        await settle(session)
        await lines[CALLER].keys("1")  # leave her a message: the prompt, the tone, record
        await wait_until(lambda: isinstance(session.mode, MailMenu), 15)
        mode = session.mode
        assert isinstance(mode, MailMenu)

        def recorded(seconds: float) -> bool:
            rec = mode.recorder
            return rec is not None and rec.step is Step.RECORDING and rec.recorded_s >= seconds

        await wait_until(lambda: recorded(2.5), 30)
        await lines[CALLER].keys("#")
        await wait_until(lambda: mode.recorder is not None and mode.recorder.step is Step.REVIEW)
        await settle(session)
        await lines[CALLER].keys("3")  # send
        await wait_until(lambda: session.t("phone.mail.sent") in session.spoken(), 15)
        await lines[CALLER].hangup()
    # The page: the header counts the new message, the panel plays it.
    mail_button = page.locator("#mail-button")
    await expect(mail_button).to_have_attribute("data-unread", "1", timeout=TIMEOUT_MS)
    await mail_button.click()
    audio = page.locator("#mail-list li[data-kind=voice] audio")
    await expect(audio).to_have_count(1)
    played = await audio.evaluate(
        """async (a) => {
            await a.play();
            await new Promise((done) => a.addEventListener("ended", done, { once: true }));
            return { duration: a.duration, ended: a.ended, error: a.error && a.error.code };
        }"""
    )
    assert played["ended"] and played["error"] is None
    assert 2.4 <= played["duration"] <= 60.5, played
    # What Chromium decodes from the authenticated endpoint is the caller's tone.
    decoded = json.loads(
        await audio.evaluate(
            """async (a) => {
                const response = await fetch(a.src, { credentials: "same-origin" });
                const data = await response.arrayBuffer();
                const ctx = new OfflineAudioContext(1, 8000, 8000);
                const buffer = await ctx.decodeAudioData(data);
                const mid = Math.floor(buffer.length / 2);
                return JSON.stringify({
                    rate: buffer.sampleRate,
                    samples: Array.from(buffer.getChannelData(0).slice(mid, mid + 4096)),
                });
            }"""
        )
    )
    assert abs(dominant_hz(decoded["samples"], decoded["rate"]) - VOICE_HZ) < 15
    # Heard: no longer new. Another page without the cookie gets nothing.
    await expect(mail_button).to_have_attribute("data-unread", "0", timeout=TIMEOUT_MS)
    stranger = await chromium.new_context(base_url=live.service.base_url)
    response = await stranger.request.get(await audio.get_attribute("src") or "")
    assert response.status == 401
    await stranger.close()
    await page.context.close()


@pytest.mark.rule("X4", "X5")
async def test_an_invitation_from_the_page_reaches_a_caller_and_8_seats_them(
    live: LiveRig,
    chromium: Browser,  # noqa: F811
) -> None:
    identity = await create_phone_identity(live.hub.sessions, pin=PIN)
    page = await signed_up_page(chromium, live.service.base_url, "Anna")
    await friends(live, "Anna", identity.id)
    founded = await page.evaluate(
        """async () => {
            const csrf = document.cookie.split("; ").find((c) => c.startsWith("vollmond_csrf="));
            const response = await fetch("/api/games", {
                method: "POST",
                credentials: "same-origin",
                headers: {
                    "Content-Type": "application/json",
                    "X-CSRF-Token": decodeURIComponent(csrf.split("=")[1]),
                },
                body: JSON.stringify({ size: 5, private: true }),
            });
            return await response.json();
        }"""
    )
    game = founded["game"]
    seat = json.dumps({game: {"token": founded["token"]}})
    await page.evaluate(f"localStorage.setItem('vollmond.seats', {seat!r})")
    await page.goto(f"/#/game/{game}")
    async with phones(live.root / "phones", {CALLER: None}) as lines:
        session = await sign_in_by_phone(live, lines[CALLER], identity.id)
        await page.click("#friends-button")
        invite = page.locator(f"#friend-list li[data-key='p:{identity.id}'] .invite-friend")
        await invite.click()
        await expect(page.locator("#friends-note")).to_have_text("Eingeladen.")
        told = session.t("phone.friends.invited_private", name="Anna")
        await wait_until(lambda: told in session.spoken(), 15)
        await settle(session)
        await lines[CALLER].keys("8")
        await wait_until(lambda: session.announcer.state == "lobby", 15)
        seats = (await live.hub.table(game)).seats
        assert identity.id in [s.phone_identity_id for s in seats]
        assert len(seats) == 2
        await lines[CALLER].hangup()
    await page.context.close()


ANNA, BERT = "+4930111", "+4930222"
TONES = {ANNA: 1000.0, BERT: 700.0}
HEARD = 1500.0  # a 6000-amplitude tone arrives near full level (test_conference_rooms.py)


@pytest.mark.rule("X2", "X4")
async def test_a_caller_calls_a_friend_into_a_room_by_keys_and_8_brings_them_in(
    live: LiveRig,
) -> None:
    anna_id = await create_phone_identity(live.hub.sessions, pin=PIN)
    bert_id = await create_phone_identity(live.hub.sessions, pin=PIN)
    anna, bert = Owner.phone(anna_id.id), Owner.phone(bert_id.id)
    box = community_of(live.hub).friends
    await box.ask(anna, bert)
    await box.accept(bert, anna)
    sources = {name: tone(hz, 120.0) for name, hz in TONES.items()}
    async with phones(live.root / "phones", dict(sources)) as lines:
        bert_call = await sign_in_by_phone(live, lines[BERT], bert_id.id, BERT)
        anna_call = await sign_in_by_phone(live, lines[ANNA], anna_id.id, ANNA)
        await lines[ANNA].keys("7")  # friends: "1 Telefon …, beim Ausrufer oder in der Lobby"
        await wait_until(lambda: isinstance(anna_call.mode, FriendsMenu), 15)
        await settle(anna_call)
        await lines[ANNA].keys("1#", gap=0.15)
        await settle(anna_call)
        await lines[ANNA].keys("4")  # call him into a room
        await wait_until(lambda: anna_call.conference_seat is not None, 15)
        inviter = (await names(live.hub.sessions, [anna]))[anna]
        told = bert_call.t("phone.friends.invited_room", name=spoken_name(bert_call, inviter))
        await wait_until(lambda: told in bert_call.spoken(), 15)
        await settle(bert_call)
        await lines[BERT].keys("8")
        await wait_until(lambda: bert_call.conference_seat is not None, 15)
        seats = anna_call.conference_seat, bert_call.conference_seat
        assert seats[0] is not None and seats[1] is not None
        room = seats[0].voice
        assert seats[1].voice is room  # the same room
        # Both talk there: the room's mix (what anyone in it hears) carries both tones.
        mixed: list[Int16Array] = []
        room.record(mixed.append)

        def both_heard() -> bool:
            window = np.concatenate(mixed[-50:]) if len(mixed) >= 50 else None
            return window is not None and all(level_at(window, hz) > HEARD for hz in TONES.values())

        await wait_until(both_heard, 15)
        room.record(None)
        for phone in lines.values():
            await phone.hangup()
    assert box.invitations(bert) == []  # used by his 8
