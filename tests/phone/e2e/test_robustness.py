"""Bad input while a real conversation runs: junk SIP, garbage RTP, unknown codecs, floods of
keys and a session that fails. The server answers or drops, counts, and the market-place
conversation between two baresip phones goes on without a gap; the game keeps taking commands.
"""

from __future__ import annotations

import asyncio
import os
import random
import struct
from pathlib import Path

import numpy as np

from tests.phone.e2e.conftest import PhoneRig, SeatSession
from tests.phone.e2e.support import (
    level_at,
    phones,
    run_sipp,
    stop_all,
    tone,
    wait_until,
)
from tests.phone.helpers import UdpPeer
from tests.phone.test_sip_attacks import Caller
from tests.phone.test_sipp import free_udp_port
from tests.service.support import running_service
from vollmond.engine.core import Rejection
from vollmond.engine.standard import GameOptions
from vollmond.engine.standard.commands import Interject, PhaseTimeout
from vollmond.engine.standard.types import Phase
from vollmond.phone.caller import CallerId
from vollmond.phone.media import Int16Array
from vollmond.phone.service import KEY_BURST, KEY_RATE, PhoneService
from vollmond.phone.sip.call import Call
from vollmond.phone.sip.guard import DropReason
from vollmond.service.config import Settings

SCENARIOS = Path(__file__).parent / "sipp"
PHONE_SCENARIOS = Path(__file__).parents[1] / "sipp"


class FailingSession(SeatSession):
    """A session with a bug: every frame raises."""

    def next_frame(self) -> Int16Array | None:
        raise RuntimeError("session bug")


def call_of(phone: PhoneService, caller: str) -> Call:
    return next(line.call for line in phone.lines.values() if line.number == caller)


async def send_junk(
    port: int, datagrams: list[bytes], spacing: float = 0.002, sender: UdpPeer | None = None
) -> None:
    """Send from ``sender`` (default: a fresh socket, i.e. a foreign address)."""
    own = sender is None
    peer = sender if sender is not None else await UdpPeer.open()
    try:
        for data in datagrams:
            peer.send(data, ("127.0.0.1", port))
            await asyncio.sleep(spacing)
    finally:
        if own:
            peer.close()


def garbage_rtp(count: int, rng: random.Random) -> list[bytes]:
    out: list[bytes] = []
    for i in range(count):
        kind = i % 4
        if kind == 0:
            out.append(rng.randbytes(rng.randint(0, 11)))  # shorter than a header
        elif kind == 1:
            out.append(bytes([0x40]) + rng.randbytes(200))  # RTP version 1
        elif kind == 2:
            out.append(struct.pack("!BBHII", 0x80, 77, i, i * 160, 99) + rng.randbytes(160))
        else:
            out.append(bytes([0x8F]) + rng.randbytes(11))  # 15 CSRCs announced, none there
    return out


def key_flood(dtmf_pt: int, count: int) -> list[bytes]:
    """`count` distinct RFC 4733 key presses (end packets with new timestamps)."""
    return [
        struct.pack("!BBHII", 0x80, dtmf_pt, i, 1000 + i * 800, 0xABCD)
        + struct.pack("!BBH", 1, 0x80 | 10, 800)
        for i in range(count)
    ]


async def test_bad_input_is_answered_or_dropped_and_the_conversation_goes_on(
    rig: PhoneRig, tmp_path: Path
) -> None:
    game = await rig.table(GameOptions(players=6))
    actor = rig.hub.actors[game]
    while actor.state is not None and actor.state.phase is not Phase.DAY:
        await rig.hub.submit(game, PhaseTimeout(actor.state.phase_seq))
    rig.board.prepared["speaker"] = SeatSession(game, 3)
    rig.board.prepared["listener"] = SeatSession(game, 4)
    rig.board.prepared["flooder"] = SeatSession(game, 5)
    sources: dict[str, Int16Array | None] = {"speaker": tone(700.0, 60), "listener": None}
    rng = random.Random(5)
    # The key flooder is a scripted caller: its flood must come from its own (latched) media
    # address, or it would be dropped as foreign RTP before the key limit is reached.
    flood_sip, flood_media = await UdpPeer.open(), await UdpPeer.open()
    async with phones(rig.root / "phones", sources) as lines:
        for phone in lines.values():
            await phone.dial(rig.sip_port)
        flood_call = Caller(flood_sip, rig.sip_port, user="flooder")
        flood_call.invite(media=("127.0.0.1", flood_media.port))
        assert (await flood_call.final()).status == 200
        flood_call.ack()
        await wait_until(lambda: len(rig.phone.lines) == 3, 15)
        flooder = call_of(rig.phone, "flooder")
        listener = call_of(rig.phone, "listener")
        assert flooder.negotiated.dtmf_pt is not None
        await asyncio.sleep(1.0)
        junk_sip = [
            b"\xff" * 60,
            b"INVITE\r\n\r\n",
            b"SIP/2.0 200 OK\r\n\r\n",
            b"INVITE sip:x SIP/2.0\r\nVia: nonsense\r\nCSeq: x INVITE\r\n\r\n",
            os.urandom(1400),
        ] * 40
        results = await asyncio.gather(
            send_junk(rig.sip_port, junk_sip),
            send_junk(listener.media.local_port, garbage_rtp(400, rng)),
            send_junk(
                flooder.media.local_port,
                key_flood(flooder.negotiated.dtmf_pt, 500),
                0.001,
                flood_media,
            ),
            run_sipp(SCENARIOS / "uac_unknown_codec.xml", rig.sip_port, tmp_path),
        )
        code, log = results[3]
        assert code == 0, log  # 488 Not Acceptable Here, then ACK
        await asyncio.sleep(2.5)  # the conversation goes on after the attacks too
        for phone in lines.values():
            await phone.hangup()
        flooder.hangup()
        await wait_until(lambda: not rig.phone.lines, 10)
        await stop_all(lines.values())  # complete recording files
        heard = lines["listener"].recording()
    flood_sip.close()
    flood_media.close()

    assert rig.phone.uas is not None
    # The garbage RTP came from a foreign port: dropped before parsing, counted (UDP on a busy
    # loopback may lose a few of the 400).
    assert listener.media.packets_foreign > 300
    assert rig.phone.uas.drops[DropReason.FOREIGN_RTP] >= listener.media.packets_foreign
    assert rig.phone.uas.dropped >= len(junk_sip) - 40  # the random 1400 bytes may parse oddly
    flood_session = rig.board.session("flooder")
    # The bucket lets a burst through, then KEY_RATE a second for as long as keys kept coming
    # (the flood is 0.5 s on a quiet machine, longer on a loaded one: the bound follows it).
    taken = flood_session.keylog
    assert taken.keys
    assert len(taken.keys) <= KEY_BURST + KEY_RATE * (taken.times[-1] - taken.times[0]) + 1
    # The market place ran without a gap: the tone is in every half second after set-up.
    body = heard[8000:]
    windows = [body[i : i + 4000] for i in range(0, len(body) - 4000, 4000)]
    assert len(windows) >= 4
    assert min(level_at(w, 700.0) for w in windows) > 1500.0
    # The game still takes commands.
    outcome = await rig.hub.submit(game, Interject(3))
    assert not isinstance(outcome, Rejection), outcome


async def test_a_failing_session_is_silenced_and_others_keep_talking(rig: PhoneRig) -> None:
    game = await rig.table(GameOptions(players=6))
    actor = rig.hub.actors[game]
    while actor.state is not None and actor.state.phase is not Phase.DAY:
        await rig.hub.submit(game, PhaseTimeout(actor.state.phase_seq))
    rig.board.prepared["speaker"] = SeatSession(game, 3)
    rig.board.prepared["listener"] = SeatSession(game, 4)
    real_factory = rig.board

    def factory(caller: CallerId) -> SeatSession:
        if caller.number == "buggy":
            return FailingSession(game, 5)
        session = real_factory(caller)
        assert isinstance(session, SeatSession)
        return session

    rig.phone.session_factory = factory
    sources: dict[str, Int16Array | None] = {
        "speaker": tone(700.0, 60),
        "listener": None,
        "buggy": tone(1200.0, 60),
    }
    async with phones(rig.root / "phones", sources) as lines:
        for phone in lines.values():
            await phone.dial(rig.sip_port)
        await wait_until(lambda: len(rig.phone.lines) == 3, 15)
        buggy = next(line for line in rig.phone.lines.values() if line.number == "buggy")
        # Its every frame fails (50 a second), and the others' talk goes on meanwhile.
        await wait_until(lambda: buggy.frame_errors > 150, 30)
        for phone in lines.values():
            await phone.hangup()
        await wait_until(lambda: not rig.phone.lines, 10)
        await stop_all(lines.values())  # complete recording files
        heard = lines["listener"].recording()
        buggy_heard = lines["buggy"].recording()
    body = heard[8000:]
    assert level_at(body, 700.0) > 1500.0
    assert np.max(np.abs(buggy_heard[8000:].astype(np.int32))) < 60  # silenced, not crashed


async def test_the_web_service_starts_the_telephone_on_its_sip_port(tmp_path: Path) -> None:
    """`vollmond serve --sip-port N`: the lifespan opens SIP; OPTIONS and 488 are answered."""
    sip_port = free_udp_port()
    settings = Settings(data_dir=tmp_path / "data", sip_port=sip_port)
    async with running_service("sqlite", settings) as service:
        work = tmp_path / "options"
        work.mkdir()
        code, log = await run_sipp(PHONE_SCENARIOS / "options.xml", sip_port, work)
        assert code == 0, log
        work = tmp_path / "g729"
        work.mkdir()
        code, log = await run_sipp(SCENARIOS / "uac_unknown_codec.xml", sip_port, work)
        assert code == 0, log
        assert service.hub.actors == {}
    # Stopped with the service: the port is free again.
    sock_check = await asyncio.get_running_loop().create_datagram_endpoint(
        asyncio.DatagramProtocol, local_addr=("127.0.0.1", sip_port)
    )
    sock_check[0].close()


async def test_a_silent_line_is_hung_up_and_its_session_closed(
    rig: PhoneRig, tmp_path: Path
) -> None:
    """No RTP after the set-up: after the RTP timeout (5 s in this rig) the server sends BYE."""
    code, log = await run_sipp(SCENARIOS / "uac_silent.xml", rig.sip_port, tmp_path)
    assert code == 0, log
    session = rig.board.session("silent")
    await wait_until(lambda: session.closed, 5)
    assert rig.phone.lines == {}
