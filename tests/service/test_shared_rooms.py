"""Conference rooms shared by processes (vollmond/service/shards/conference_rooms.py), on the
local bus of `--workers` and on the real NATS server.

Two processes, each with its rooms and its voice relay: a member on the room's owner and one
on the other process (a mirror) see one list of members, are told of each other's comings,
modes, chat lines and goings, and hear each other through the relay — a listener nobody; a
private room's code and id hash to the process that opened it, so a code typed on the other
finds it; a closed room's code finds nothing. The real service: tests/voice/test_rooms_workers.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.phone.helpers import ToneSource
from tests.phone.test_mixer import level_at
from vollmond.service.conference import (
    ConferenceRoom,
    EventKind,
    Member,
    RoomEvent,
    TooManyPrivateRoomsError,
    UnknownCodeError,
)
from vollmond.service.enforce import Person
from vollmond.service.shards.conference_rooms import CODE_KEY, MirrorRoom, ShardedConferenceRooms
from vollmond.service.shards.ownership import HashOwnership
from vollmond.settings.rooms import RoomSettings
from vollmond.voice.frames import Int16Array
from vollmond.voice.relay import VoiceRelay
from vollmond.voice.rooms import VoiceRooms

from .test_shards import Connect, open_bus

NODES = ("w0", "w1")
ROOM = "public-werwolf"
HEARD = 1000.0
SILENT = 60.0  # a relayed mix has gaps where a frame came late: their edges splatter a little


@pytest.fixture(params=["local", "nats"])
async def bus(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Connect]:
    async with open_bus(request.param, tmp_path) as connect:
        yield connect


@dataclass
class NoGames:
    actors: dict[str, Any] = field(default_factory=dict)


@dataclass(eq=False)
class Ear:
    """A member's connection: what it was told."""

    told: list[RoomEvent] = field(default_factory=list)

    def room_event(self, event: RoomEvent) -> None:
        self.told.append(event)


@pytest.fixture
async def pair(bus: Connect) -> AsyncIterator[list[ShardedConferenceRooms]]:
    ownership = HashOwnership(NODES)
    made: list[tuple[ShardedConferenceRooms, VoiceRelay]] = []
    for node in NODES:
        transport = await bus()
        voice = VoiceRooms(NoGames())
        relay = VoiceRelay(node, transport, voice, ownership.owner_of)
        await relay.start()
        rooms = ShardedConferenceRooms(
            RoomSettings(),
            node=node,
            ownership=ownership,
            transport=transport,
            relay=_get(relay),
        )
        voice.conference = rooms.hosted_voice
        await rooms.start()
        made.append((rooms, relay))
    yield [rooms for rooms, _ in made]
    for rooms, relay in made:
        await rooms.close()
        await relay.close()
        await rooms.transport.close()


def _get(relay: VoiceRelay) -> Callable[[], VoiceRelay | None]:
    return lambda: relay


async def until(done: Callable[[], bool], within_s: float = 5.0) -> None:
    async with asyncio.timeout(within_s):
        while not done():
            await asyncio.sleep(0.01)


def slots(room: ConferenceRoom) -> list[tuple[int, str, bool, bool]]:
    return [(m.slot, m.name, m.muted, m.listening) for m in room]


async def talk(
    members: list[tuple[ConferenceRoom, Member, float]], ticks: int = 50
) -> list[Int16Array]:
    """Every member plays its tone and pulls its mix each 20 ms; what each heard."""
    tones = [ToneSource(freq) for _, _, freq in members]
    heard: list[list[Int16Array]] = [[] for _ in members]
    silence = np.zeros(160, dtype=np.int16)
    for _ in range(ticks):
        for (room, member, _), source in zip(members, tones, strict=True):
            room.voice.push(member.slot, source())
        for i, (room, member, _) in enumerate(members):
            frame = room.voice.pull(member.slot, puller=("test", i))
            heard[i].append(silence if frame is None else frame)
        await asyncio.sleep(0.02)
    return [np.concatenate(h[ticks // 2 :]) for h in heard]  # the relay's start left out


@pytest.mark.rule("X2")
async def test_members_on_two_processes_meet_in_one_room(
    pair: list[ShardedConferenceRooms],
) -> None:
    owner = NODES.index(pair[0].owner_of(ROOM))
    here, there = pair[owner], pair[1 - owner]
    anna_ear, bert_ear = Ear(), Ear()
    room = here.public("werwolf")
    mirror = there.public("werwolf")
    assert isinstance(mirror, MirrorRoom) and not isinstance(room, MirrorRoom)
    anna = await here.enter(room, "Anna", Person(1), "web", enforcer=None, listener=anna_ear)
    bert = await there.enter(mirror, "Bert", Person(2), "phone", enforcer=None, listener=bert_ear)
    # One list of members on both; both processes count two in the room.
    assert slots(mirror) == slots(room) == [(1, "Anna", False, False), (2, "Bert", False, False)]
    await until(lambda: there.headcount("werwolf") == here.headcount("werwolf") == 2)
    assert [(e.kind, e.name) for e in anna_ear.told] == [(EventKind.JOINED, "Bert")]
    # Chat at the owner, in its order, told to both.
    await there.say(mirror, bert, "Hallo")
    await here.say(room, anna, "Hallo Bert")
    await until(lambda: len(mirror.chat) == 2)
    assert [(line.seq, line.name, line.text) for line in mirror.chat] == [
        (1, "Bert", "Hallo"),
        (2, "Anna", "Hallo Bert"),
    ]
    await until(lambda: any(e.text == "Hallo Bert" for e in bert_ear.told))
    # Voice: each hears the other through the relay, nobody himself.
    anna_heard, bert_heard = await talk([(room, anna, 500.0), (mirror, bert, 900.0)])
    assert level_at(anna_heard, 900.0) > HEARD and level_at(bert_heard, 500.0) > HEARD
    assert level_at(anna_heard, 500.0) < SILENT and level_at(bert_heard, 900.0) < SILENT
    # Bert mutes himself on his process: the owner's room has him muted, nobody hears him.
    mirror.set_muted(bert, True)
    await until(lambda: slots(room)[1] == (2, "Bert", True, False))
    assert (EventKind.MODE, "Bert") in [(e.kind, e.name) for e in anna_ear.told]
    anna_heard, bert_heard = await talk([(room, anna, 500.0), (mirror, bert, 900.0)])
    assert level_at(anna_heard, 900.0) < SILENT and level_at(bert_heard, 500.0) > HEARD
    # Anna listens only: Bert no longer hears her; his copy says so.
    room.set_listening(anna, True)
    await until(lambda: slots(mirror)[0] == (1, "Anna", False, True))
    _, bert_heard = await talk([(room, anna, 500.0), (mirror, bert, 900.0)])
    assert level_at(bert_heard, 500.0) < SILENT
    # Bert leaves: the owner's room and Anna are told.
    there.leave(mirror, bert)
    await until(lambda: len(room.members) == 1)
    assert anna_ear.told[-1].kind is EventKind.LEFT and anna_ear.told[-1].name == "Bert"


@pytest.mark.rule("X2")
async def test_a_private_room_is_found_by_its_code_on_the_other_process(
    pair: list[ShardedConferenceRooms],
) -> None:
    first, second = pair
    room = await first.open_private(Person(1))
    assert room.code is not None
    # Opened where its code and its id hash to: the other process knows the owner unasked.
    assert first.ownership.owner_of(f"{CODE_KEY}{room.code}") == first.node
    assert first.owner_of(room.id) == first.node
    anna = await first.enter(room, "Anna", Person(1), "web", enforcer=None)
    found = await second.by_code(room.code.lower())
    assert isinstance(found, MirrorRoom) and found.id == room.id
    bert = await second.enter(found, "Bert", Person(2), "web", enforcer=None)
    assert slots(found) == [(1, "Anna", False, False), (2, "Bert", False, False)]
    assert await second.invited(room.id) is found
    second.leave(found, bert)
    await until(lambda: len(room.members) == 1)
    first.leave(room, anna)  # the last one out: the room is closed, its code finds nothing
    with pytest.raises(UnknownCodeError):
        await second.by_code(room.code)


@pytest.mark.rule("X2")
async def test_a_person_opens_private_rooms_up_to_one_ceiling_on_all_processes(
    pair: list[ShardedConferenceRooms],
) -> None:
    first = pair[0]
    anna = Person(7)
    assert first.settings.private_per_person == 2
    opened = []
    for rooms in pair:  # one on each process: the ceiling of two
        room = await rooms.open_private(anna)
        opened.append((rooms, room, await rooms.enter(room, "Anna", anna, "web", enforcer=None)))
    for rooms in pair:
        with pytest.raises(TooManyPrivateRoomsError):
            await rooms.open_private(anna)
    assert await first.open_private(Person()) is not None  # a guest's rooms count for nobody
    # Anna leaves her room on the second process: it closes, and she may open one again.
    rooms, room, member = opened.pop()
    rooms.leave(room, member)

    async def opens() -> bool:
        try:
            room = await first.open_private(anna)
        except TooManyPrivateRoomsError:
            return False
        first.drop_if_empty(room)
        return True

    async with asyncio.timeout(5.0):
        while not await opens():
            await asyncio.sleep(0.01)
