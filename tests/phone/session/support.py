"""Helpers for the phone session tests: a text-recording voice and key-driving helpers.

`TextVoice` is a real implementation of the Voice protocol (not a mock of the session): it
renders every sentence as a beep whose length grows with the text, so prompt durations can be
compared, and records what it was asked to say.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import numpy as np

from vollmond.phone.caller import CallerId
from vollmond.phone.session import PhoneSession
from vollmond.phone.session.prompts import tones
from vollmond.phone.session.prompts.voice import Audio
from vollmond.service.hub import Hub
from vollmond.settings import IdentitySettings
from vollmond.store.phone import PhoneIdentity
from vollmond.store.phone_numbers import VerifyOutcome, request_number_link, verify_number

SAMPLES_PER_CHAR = 80  # 10 ms of beep per character


class TextVoice:
    def __init__(self) -> None:
        self.rendered: list[tuple[str, str]] = []

    def render(self, text: str, lang: str) -> Audio:
        self.rendered.append((text, lang))
        beep = tones.tone(700, 1000)
        reps = max(1, len(text) * SAMPLES_PER_CHAR // len(beep) + 1)
        return np.tile(beep, reps)[: max(160, len(text) * SAMPLES_PER_CHAR)].astype(np.int16)


async def call_in(
    hub: Hub,
    caller: str | CallerId = "anonymous",
    *,
    voice: TextVoice | None = None,
    timeout_s: float = 3.0,
    **kwargs: object,
) -> PhoneSession:
    """A call from `caller` (a From number, or a whole CallerId), greeted and identified.

    Tests type at machine speed, so after a wrong key the next key would count as the same
    burst and be dropped (KeyParser.flood_gap_s); unless a test asks for it, that is off."""
    kwargs.setdefault("flood_gap_s", 0.0)
    session = PhoneSession(
        hub,
        caller if isinstance(caller, CallerId) else CallerId(caller, None, "192.0.2.1"),
        voice or TextVoice(),
        digit_timeout_s=timeout_s,
        **kwargs,  # type: ignore[arg-type]
    )
    await session.start()
    return session


async def verified_number(
    hub: Hub, account_id: int, number: str, *, asserted: bool = False
) -> PhoneIdentity:
    """Link `number` to the account the way a person does: ask in the browser (the store
    call behind ``POST /api/phone``), then type the code from that number."""
    settings = IdentitySettings()
    claim = await request_number_link(hub.sessions, account_id, number, settings=settings)
    verified = await verify_number(
        hub.sessions, number, claim.code, asserted=asserted, settings=settings
    )
    assert verified.outcome is VerifyOutcome.VERIFIED and verified.identity is not None
    return verified.identity


async def press(session: PhoneSession, keys: str) -> None:
    for key in keys:
        session.on_key(key)
    await session.idle()


async def wait_until(check: Callable[[], bool], timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.01)


def said(session: PhoneSession, since: int = 0) -> list[str]:
    return session.spoken()[since:]


def heard(session: PhoneSession, fragment: str, since: int = 0) -> bool:
    return any(fragment in line for line in said(session, since))
