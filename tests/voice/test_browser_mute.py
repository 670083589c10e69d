"""A moderator's mute silences a browser player's microphone too (O5), on real WebRTC.

aiortc peers signalled over the real WebSocket of a real service (no phone channel needed):
a speaker with an account plays a tone, a neighbour at the table listens. The mute is
imposed through the service's one moderation core, the running enforcer applies it; its
expiry is reached by moving the core's clock.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from tests.phone.e2e.support import level_at, wait_until
from tests.service.support import Service, running_service
from tests.voice.client import VoiceClient, listen_on, open_voice
from vollmond.engine.core import Rejection
from vollmond.engine.standard import GameOptions
from vollmond.engine.standard.commands import PhaseTimeout
from vollmond.engine.standard.types import Phase
from vollmond.moderation import SanctionKind, Subject
from vollmond.phone.media import Int16Array
from vollmond.service.config import Settings
from vollmond.store.models import AccountRow, Role
from vollmond.store.types import utcnow

TONE = 1000.0
HEARD = 1500.0  # a 6000-amplitude tone arrives near full level through Opus
SILENT = 60.0
CHUNK = 800  # 100 ms: a leak of a few frames is not diluted by a long window
LISTEN_S = 1.5


@pytest.fixture
async def service(tmp_path: Path) -> AsyncIterator[Service]:
    async with running_service("sqlite", Settings(data_dir=tmp_path / "data")) as running:
        yield running


def loudest(recording: Int16Array) -> float:
    """The tone's level in the loudest 100 ms of `recording`."""
    chunks = [recording[i : i + CHUNK] for i in range(0, len(recording) - CHUNK + 1, CHUNK)]
    return max((level_at(chunk, TONE) for chunk in chunks), default=0.0)


async def listen(listener: VoiceClient, seconds: float = LISTEN_S) -> Int16Array:
    """What `listener` hears in the next `seconds` (at least that much audio)."""
    mark = listener.mark()
    frames = int(seconds * 50)
    await wait_until(lambda: listener.mark() - mark >= frames, 15)
    return listener.since(mark)


async def day_table(service: Service, speaker: int) -> tuple[str, list[str]]:
    """A running game by day; seat 1 belongs to the account `speaker`, the others are guests."""
    hub = service.hub
    founded = await hub.found(
        GameOptions(players=5), private=False, host_account_id=speaker, host_name="Laut"
    )
    assert founded.token is not None
    tokens = [founded.token]
    for i in range(2, 6):
        tokens.append((await hub.join(founded.game.id, account_id=None, name=f"p{i}")).token)
    actor = hub.actors[founded.game.id]
    while actor.state is not None and actor.state.phase is not Phase.DAY:
        outcome = await hub.submit(founded.game.id, PhaseTimeout(actor.state.phase_seq))
        assert not isinstance(outcome, Rejection), outcome
    return founded.game.id, tokens


async def told(client: VoiceClient, kind: str) -> None:
    await wait_until(
        lambda: any(f.get("type") == "moderation" and f.get("kind") == kind for f in client.frames),
        10,
    )


@pytest.mark.rule("O5")
async def test_a_muted_browser_players_voice_leaves_the_rooms_until_the_mute_ends(
    service: Service,
) -> None:
    enforcer = service.enforcer
    assert enforcer is not None
    moderation = enforcer.moderation
    loud = AccountRow(name="Laut", name_key="laut", password_hash="-")
    mo = AccountRow(name="Mo", name_key="mo", password_hash="-", role=Role.MODERATOR)
    async with service.hub.sessions.begin() as session:
        session.add_all([loud, mo])
    game, tokens = await day_table(service, loud.id)

    speaker = await open_voice(service.ws_url, game, tokens[0], TONE)
    listener = await open_voice(service.ws_url, game, tokens[1], None)
    await listen_on(speaker)
    await listen_on(listener)
    try:
        await wait_until(lambda: level_at(listener.recording()[-CHUNK:], TONE) > HEARD, 20)
        assert level_at(await listen(listener), TONE) > HEARD  # before: the market hears it

        await moderation.impose(
            by=mo.id,
            subject=Subject.account(loud.id),
            kind=SanctionKind.MUTE,
            reason="Lärm",
            duration=timedelta(minutes=10),
        )
        await told(speaker, "mute")  # the enforcer applied it (the cache first, then told)
        # What was on its way before (queues, jitter buffers; slow on a loaded machine) plays
        # out; a voice still let through would never fall quiet here.
        await wait_until(lambda: level_at(listener.recording()[-CHUNK:], TONE) < SILENT, 10)
        muted = await listen(listener)
        assert loudest(muted) < SILENT, "the muted voice reached the market place"

        # A new peer of the muted player (a reload, voice off and on) is silent from its
        # first frame: the mute is read before the peer exists.
        await speaker.close()
        mark = listener.mark()
        speaker = await open_voice(service.ws_url, game, tokens[0], TONE)
        await listen_on(speaker)
        await listen(listener, 2.0)
        assert loudest(listener.since(mark)) < SILENT, "a re-opened muted peer leaked"

        # The mute expires: the same peer's voice is back in the market place.
        moderation.clock = lambda: utcnow() + timedelta(minutes=11)
        await wait_until(lambda: level_at(listener.recording()[-CHUNK:], TONE) > HEARD, 20)
        assert level_at(await listen(listener), TONE) > HEARD
    finally:
        await speaker.close()
        await listener.close()
