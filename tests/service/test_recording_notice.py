"""The recording after an alarm over the browser protocol (O2, O4): a real service, real
WebSockets, the real vault.

An alarm raised through the service's one ``Moderation`` object warns every player at the
table (a ``recording`` message with the mark's text), then the recording runs; a player who
connects later is told at once (O4); the market chat of the recorded span lands encrypted in
the vault; the recording stops at the end of the round or after ``recording_max_s``, and the
players are told it ended. No telephone here: the audio is the e2e test's business
(tests/phone/e2e/test_recording.py).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from vollmond.engine.core import Audience, Event
from vollmond.engine.standard.commands import PhaseTimeout
from vollmond.engine.standard.types import Phase
from vollmond.moderation import Caller, Moderation
from vollmond.moderation.recordings import Recording, list_recordings, play_recording
from vollmond.service.config import Settings
from vollmond.service.hub import Hub
from vollmond.service.policy import DurationBounds, Policy
from vollmond.service.recorder import TableRecorder, _reaches
from vollmond.settings.moderation import ModerationSettings
from vollmond.store import Role
from vollmond.store.models import AccountRow

from .support import ApiClient, Service, WsClient, hello, open_ws, running_service, seated_table

POLICY = Policy(durations=DurationBounds(min_s=0.05), login_attempts_per_minute=100)
DURATIONS = {"night_s": 600, "morning_s": 600, "day_s": 600, "vote_s": 600}


@dataclass
class Table:
    service: Service
    game_id: str
    tokens: list[str]
    moderation: Moderation
    recorder: TableRecorder
    admin: int

    @property
    def hub(self) -> Hub:
        return self.service.hub


@pytest.fixture
async def sockets() -> AsyncIterator[list[WsClient]]:
    out: list[WsClient] = []
    yield out
    for ws in out:
        await ws.close()


async def table(tmp_path: Path, max_s: int) -> AsyncIterator[Table]:
    settings = Settings(
        data_dir=tmp_path / "data",
        policy=POLICY,
        moderation=ModerationSettings(recording_max_s=max_s),
    )
    async with running_service("sqlite", settings) as service:
        clients: list[ApiClient] = []
        try:
            game_id, clients, tokens = await seated_table(
                lambda: ApiClient(service), 4, "rec", durations=DURATIONS
            )
            assert service.app is not None
            moderation: Moderation = service.app.state.moderation
            recorder: TableRecorder = service.app.state.recorder
            row = AccountRow(name="Ada", name_key="ada", password_hash="-", role=Role.ADMIN)
            async with service.hub.sessions.begin() as session:
                session.add(row)
            yield Table(service, game_id, tokens, moderation, recorder, row.id)
        finally:
            for client in clients:
                await client.close()


async def to_day(hub: Hub, game_id: str) -> int:
    actor = hub.actors[game_id]
    while actor.state is not None and actor.state.phase is not Phase.DAY:
        await hub.submit(game_id, PhaseTimeout(actor.state.phase_seq))
    assert actor.state is not None
    return int(actor.state.round)


async def next_round(hub: Hub, game_id: str) -> None:
    actor = hub.actors[game_id]
    assert actor.state is not None
    start = actor.state.round
    while actor.state is not None and actor.state.round == start:
        assert actor.state.phase is not Phase.OVER
        await hub.submit(game_id, PhaseTimeout(actor.state.phase_seq))


async def recording(ws: WsClient, timeout: float = 20.0) -> dict[str, Any]:
    return await ws.expect("recording", timeout)


async def player(t: Table, sockets: list[WsClient], seat: int) -> WsClient:
    ws = await open_ws(t.service)
    sockets.append(ws)
    welcome = await hello(ws, t.game_id, t.tokens[seat - 1])
    assert welcome["type"] == "welcome", welcome
    return ws


async def alarm(t: Table, *, caller: int, accused: int) -> int:
    actor = t.hub.actors[t.game_id]
    assert actor.state is not None
    raised = await t.moderation.raise_alarm(
        game_id=t.game_id,
        round=actor.state.round,
        phase=actor.state.phase.value,
        caller=Caller(house=caller),
        reason=1,
        accused_house=accused,
    )
    return raised.id


async def say(ws: WsClient, seat: int, text: str) -> None:
    await ws.send({"type": "command", "command": {"type": "Say", "actor": seat, "text": text}})
    await ws.expect("ack")


async def listed_recordings(t: Table, now: datetime) -> list[Recording]:
    return await list_recordings(t.hub.sessions, t.moderation.settings, by=t.admin, now=now)


async def wait_ended(t: Table) -> None:
    async with asyncio.timeout(20):
        while t.recorder.recordings or t.recorder.sinks:
            await asyncio.sleep(0.02)


@pytest.mark.rule("O2", "O4")
async def test_the_table_is_warned_latecomers_are_told_and_the_chat_is_recorded_until_the_deadline(
    tmp_path: Path, sockets: list[WsClient]
) -> None:
    async for t in table(tmp_path, max_s=2):
        await to_day(t.hub, t.game_id)
        first = await player(t, sockets, 1)
        assert t.hub.notices.current(t.game_id) is None
        alarm_id = await alarm(t, caller=2, accused=1)

        warned = await recording(first)
        assert warned["active"] is True and warned["stage"] == "warning"
        assert warned["mark"] == "Aufnahme beginnt gleich"
        assert "aufgezeichnet" in warned["text"] and "höchstens 2 Sekunden" in warned["text"]
        running = await recording(first)
        assert running["stage"] == "recording" and running["mark"] == "Aufnahme läuft"
        assert running["until"] - running["since"] == pytest.approx(2.0, abs=0.01)
        assert "seats" not in running  # who called or is accused stays with the moderators

        await say(first, 1, "Ihr seid alle Betrüger")
        # O4: whoever connects during the recording is told at once, after the welcome.
        late = await player(t, sockets, 3)
        told = await recording(late)
        assert told["active"] is True and told["stage"] == "recording"

        started = time.monotonic()
        ended = await recording(first)
        assert ended == {
            "type": "recording",
            "active": False,
            "text": "Die Aufzeichnung an diesem Tisch ist beendet.",
        }
        assert (await recording(late))["active"] is False
        assert time.monotonic() - started < 3.0
        await wait_ended(t)
        assert t.hub.notices.current(t.game_id) is None

        now = datetime.now(UTC)
        vault = t.moderation.vault
        (listed,) = await listed_recordings(t, now)
        assert listed.game_id == t.game_id and listed.alarm_id == alarm_id
        assert listed.room == "market" and listed.ended_at is not None
        assert (listed.ended_at - listed.started_at).total_seconds() == pytest.approx(2.0, abs=1.0)
        raw = (vault.directory / f"{listed.id}.vrec").read_bytes()
        assert b"Betr" not in raw  # the chat line is not in the file in the clear
        content = await play_recording(t.hub.sessions, vault, listed.id, by=t.admin, now=now)
        assert content.complete
        assert [(c.speaker, c.text) for c in content.chat] == [
            ("1 (market)", "Ihr seid alle Betrüger")
        ]


@pytest.mark.rule("O2")
async def test_the_recording_stops_at_the_end_of_the_round(
    tmp_path: Path, sockets: list[WsClient]
) -> None:
    async for t in table(tmp_path, max_s=300):
        await to_day(t.hub, t.game_id)
        first = await player(t, sockets, 4)
        await alarm(t, caller=4, accused=2)
        assert (await recording(first))["stage"] == "warning"
        assert (await recording(first))["stage"] == "recording"
        # A second alarm at the same table starts no second recording.
        await alarm(t, caller=3, accused=2)
        await asyncio.sleep(0.2)
        assert len(t.recorder.recordings) == 1
        await next_round(t.hub, t.game_id)
        assert (await recording(first, timeout=5))["active"] is False
        await wait_ended(t)
        now = datetime.now(UTC)
        (listed,) = await listed_recordings(t, now)
        assert listed.ended_at is not None
        assert (listed.ended_at - listed.started_at).total_seconds() < 10


def test_chat_of_rooms_the_alarm_does_not_concern_is_not_recorded() -> None:
    market = Event("chat", Audience.public(), {"room": "market"})
    call_of_3_and_4 = Event("chat", Audience.to(3, 4), {"room": "call"})
    night_room = Event("chat", Audience.to(1, 5), {"room": "night_room"})
    assert _reaches(market, frozenset({1, 2}))
    assert not _reaches(call_of_3_and_4, frozenset({1, 2}))
    assert _reaches(night_room, frozenset({1, 2}))
    assert _reaches(call_of_3_and_4, frozenset({4}))
    assert not _reaches(call_of_3_and_4, frozenset())  # no seat named: the market only
