"""The attacks on the SIP/RTP entry path from the probe of issue 8, replayed with real UDP
datagrams against a running server (docs/security.md, "SIP and RTP").

Linux routes all of 127.0.0.0/8 to the loopback interface, so a socket bound on 127.0.0.2 is
a second, genuinely different source address: the "third party" of a reflection attack, the
stranger injecting RTP, or a trusted proxy.
"""

from __future__ import annotations

import asyncio
import gc
import os
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from tests.phone.helpers import RecordingHandler, UdpPeer
from vollmond.phone.dtmf import TelephoneEvent
from vollmond.phone.g711 import ALAW
from vollmond.phone.rtp import RtpPacket, parse_rtp
from vollmond.phone.sdp import negotiate, parse_sdp
from vollmond.phone.sip.guard import DropReason
from vollmond.phone.sip.message import SipResponse, header_params
from vollmond.phone.sip.uas import SipUas, UasConfig
from vollmond.settings.sip import SipSettings

#: Limits high enough that only the limit a test is about can trigger.
OPEN = SipSettings(requests_per_second=10_000, request_burst=10_000, invite_burst=10_000)


def config(settings: SipSettings = OPEN, **kwargs: float) -> UasConfig:
    return UasConfig(host="127.0.0.1", port=0, t1=0.05, t2=0.4, settings=settings, **kwargs)  # type: ignore[arg-type]


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@asynccontextmanager
async def server(cfg: UasConfig) -> AsyncIterator[tuple[SipUas, RecordingHandler]]:
    handler = RecordingHandler()
    uas = await SipUas.start(cfg, handler)
    try:
        yield uas, handler
    finally:
        await uas.close(bye_timeout=0.1)


def sdp(address: str, port: int) -> bytes:
    return (
        "v=0\r\n"
        f"o=test 1 1 IN IP4 {address}\r\n"
        "s=-\r\n"
        f"c=IN IP4 {address}\r\n"
        "t=0 0\r\n"
        f"m=audio {port} RTP/AVP 8 101\r\n"
        "a=rtpmap:8 PCMA/8000\r\n"
        "a=rtpmap:101 telephone-event/8000\r\n"
        "a=sendrecv\r\n"
    ).encode()


class Caller:
    """The caller's side of one INVITE, with the headers a test wants to break or add."""

    def __init__(self, peer: UdpPeer, server_port: int, user: str = "caller") -> None:
        self.peer = peer
        self.user = user
        self.server = ("127.0.0.1", server_port)
        self.call_id = secrets.token_hex(8)
        self.from_tag = secrets.token_hex(4)
        self.to_tag = ""
        self.branch = "z9hG4bK" + secrets.token_hex(6)

    def headers(self, method: str, cseq: int = 1, branch: str | None = None) -> str:
        host, port = self.peer.transport.get_extra_info("sockname")[:2]  # type: ignore[union-attr]
        to = "<sip:1234@127.0.0.1>" + (f";tag={self.to_tag}" if self.to_tag else "")
        return (
            f"{method} sip:1234@127.0.0.1 SIP/2.0\r\n"
            f"Via: SIP/2.0/UDP {host}:{port};branch={branch or self.branch}\r\n"
            f"From: <sip:{self.user}@{host}>;tag={self.from_tag}\r\n"
            f"To: {to}\r\n"
            f"Call-ID: {self.call_id}\r\n"
            f"CSeq: {cseq} {method}\r\n"
        )

    def invite(
        self, media: tuple[str, int] = ("127.0.0.1", 9), *, contact: str = "", extra: str = ""
    ) -> None:
        host, port = self.peer.transport.get_extra_info("sockname")[:2]  # type: ignore[union-attr]
        body = sdp(*media)
        head = (
            self.headers("INVITE")
            + f"Contact: {contact or f'<sip:{self.user}@{host}:{port}>'}\r\n"
            + extra
            + f"Content-Type: application/sdp\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        self.peer.send(head.encode() + body, self.server)

    def ack(self) -> None:
        head = self.headers("ACK", branch="z9hG4bK" + secrets.token_hex(6))
        self.peer.send((head + "Content-Length: 0\r\n\r\n").encode(), self.server)

    async def final(self) -> SipResponse:
        while True:
            response = await self.peer.response()
            if response.status >= 200 and response.get("Call-ID") == self.call_id:
                self.to_tag = header_params(response.require("To"))["tag"]
                return response


async def quiet(peer: UdpPeer, seconds: float) -> list[bytes]:
    """Everything ``peer`` receives within ``seconds``."""
    got: list[bytes] = []
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    while (left := end - loop.time()) > 0:
        try:
            got.append(await peer.recv_raw(timeout=left))
        except TimeoutError:
            break
    return got


# --- 1. fd leak: call set-up is exception-safe ------------------------------------------------


async def test_cut_off_contact_is_answered_400_and_leaks_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The probe: 300 INVITEs with `Contact: <sip:x@127.0.0.1` (no `>`) got only 100 Trying and
    left 300 RTP sockets open. Now each gets one 400 and nothing stays behind."""
    async with server(config()) as (uas, _):
        peer = await UdpPeer.open()
        try:
            baseline = open_fds()
            statuses = []
            for _ in range(30):  # in groups of 10: a loopback socket buffer holds ~100 datagrams
                callers = [Caller(peer, uas.port) for _ in range(10)]
                for caller in callers:
                    caller.invite(contact="<sip:x@127.0.0.1")
                statuses += [(await peer.response()).status for _ in callers]
            assert statuses == [400] * 300
            assert await quiet(peer, 0.3) == []  # said once, not retransmitted
            assert open_fds() == baseline
            assert (uas.calls, uas.transactions, uas.tasks) == ([], 0, 0)
            assert uas.drops[DropReason.MALFORMED] == 300
        finally:
            peer.close()
    gc.collect()
    assert not [r for r in caplog.records if "never retrieved" in r.getMessage()]


# --- 2. reflection and amplification ----------------------------------------------------------


async def test_no_media_before_ack_and_only_to_the_signalling_host() -> None:
    """The probe aimed the SDP at a third party and got 332x its traffic back as RTP. Now no
    RTP flows until the ACK (which a forged source never sends: it cannot see our To tag), and
    then only to the host the INVITE came from, on the SDP's port."""
    async with server(config()) as (uas, handler):
        victim = await UdpPeer.open("127.0.0.2")
        port = victim.port
        caller_media = await UdpPeer.open("127.0.0.1", port)
        sip = await UdpPeer.open()
        try:
            caller = Caller(sip, uas.port)
            caller.invite(media=("127.0.0.2", port))
            ok = await caller.final()
            assert ok.status == 200
            # 200 retransmissions go on (no ACK yet), but no RTP goes anywhere.
            assert await quiet(victim, 0.5) == []
            assert await quiet(caller_media, 0.01) == []
            caller.ack()
            await handler.wait_for(lambda: handler.started)
            assert parse_rtp(await caller_media.recv_raw()).payload_type == 8
            assert await quiet(victim, 0.3) == []
        finally:
            for peer in (victim, caller_media, sip):
                peer.close()


async def test_a_trusted_proxy_may_name_another_media_host() -> None:
    """Behind Kamailio + rtpengine the SDP names rtpengine, not the proxy: trusted, so media
    goes to the SDP's address (after the ACK)."""
    trusting = SipSettings(trusted_proxies=("127.0.0.1",))
    async with server(config(trusting)) as (uas, handler):
        rtpengine = await UdpPeer.open("127.0.0.2")
        sip = await UdpPeer.open()
        try:
            caller = Caller(sip, uas.port)
            caller.invite(media=("127.0.0.2", rtpengine.port))
            assert (await caller.final()).status == 200
            assert await quiet(rtpengine, 0.2) == []
            caller.ack()
            await handler.wait_for(lambda: handler.started)
            assert parse_rtp(await rtpengine.recv_raw()).payload_type == 8
        finally:
            rtpengine.close()
            sip.close()


async def test_forged_invites_are_not_amplified() -> None:
    """INVITEs never ACKed (their source is forged) with the SDP at a third party: the third
    party gets no RTP at all, and the forged source gets about a dozen answers for each of the
    few INVITEs that are taken, then one answer per INVITE (default limits)."""
    async with server(UasConfig(host="127.0.0.1", port=0, t1=0.05, t2=0.4)) as (uas, _):
        victim = await UdpPeer.open("127.0.0.2")
        sip = await UdpPeer.open()
        try:
            sent = 0
            received: list[bytes] = []
            for n in range(100):
                caller = Caller(sip, uas.port)
                before = len(caller.headers("INVITE"))
                caller.invite(media=("127.0.0.2", victim.port))
                sent += before + len(sdp("127.0.0.2", victim.port)) + 80
                if n % 10 == 9:  # a loopback socket buffer holds ~100 datagrams
                    received += await quiet(sip, 0.01)
            received += await quiet(sip, 4.0)  # past 64*T1: every 200 stopped, calls ended
            assert await quiet(victim, 0.01) == []
            ratio = sum(map(len, received)) / sent
            statuses = [int(r.split(b" ", 2)[1]) for r in received if r.startswith(b"SIP/2.0 ")]
            byes = [r for r in received if r.startswith(b"BYE ")]
            # Default limits: 8 calls per source are taken (each: 100, 180, the 200 about ten
            # times until 64*T1, one BYE), every later INVITE gets one 486.
            assert len(byes) == 8  # one per unconfirmed call, not retransmitted
            assert statuses.count(486) == 92
            assert uas.drops[DropReason.SOURCE_BUSY] == 92
            print(f"forged INVITEs: {sent} bytes in, {sum(map(len, received))} out, x{ratio:.2f}")
            assert ratio < 3.0, ratio
            assert uas.calls == []
        finally:
            victim.close()
            sip.close()


async def test_call_caps_total_and_per_source() -> None:
    """Total cap → 503 with Retry-After; per-source cap → 486; INVITE rate → 503 Retry-After.
    A refused INVITE opens no port and leaves no transaction."""
    caps = SipSettings(
        max_calls=3,
        max_calls_per_source=2,
        invite_burst=3,
        invites_per_second=0.01,
        retry_after=17,
        requests_per_second=1000,
        request_burst=1000,
    )
    async with server(config(caps)) as (uas, _):
        one = await UdpPeer.open("127.0.0.1")
        two = await UdpPeer.open("127.0.0.2")
        three = await UdpPeer.open("127.0.0.3")
        try:
            for _ in range(2):
                caller = Caller(one, uas.port)
                caller.invite()
                assert (await caller.final()).status == 200
            fds = open_fds()
            busy = Caller(one, uas.port)
            busy.invite()
            assert (await busy.final()).status == 486  # two calls from 127.0.0.1 already
            other = Caller(two, uas.port)
            other.invite()
            assert (await other.final()).status == 200
            full = Caller(three, uas.port)
            full.invite()
            refused = await full.final()
            assert (refused.status, refused.get("Retry-After")) == (503, "17")
            assert open_fds() == fds + 1  # only the third call's RTP port
            assert uas.drops[DropReason.SOURCE_BUSY] == 1
            assert uas.drops[DropReason.OVER_CAPACITY] == 1
        finally:
            for peer in (one, two, three):
                peer.close()
    rate = SipSettings(invite_burst=3, invites_per_second=0.01, retry_after=17)
    async with server(config(rate)) as (uas, _):
        peer = await UdpPeer.open()
        try:
            statuses = []
            for _ in range(4):
                caller = Caller(peer, uas.port)
                caller.invite(contact="")
                response = await caller.final()
                statuses.append((response.status, response.get("Retry-After")))
            assert statuses == [(200, None)] * 3 + [(503, "17")]
            assert uas.drops[DropReason.RATE_LIMITED] == 1
        finally:
            peer.close()


# --- 3. RTP from anywhere ---------------------------------------------------------------------


def key(digit: int, timestamp: int, seq: int, pt: int = 101) -> bytes:
    return RtpPacket(
        pt, seq, timestamp, 0xBAD, TelephoneEvent(digit, True, 10, 800).build()
    ).build()


async def test_rtp_from_a_foreign_address_is_dropped_and_counted() -> None:
    """The probe injected `#9` from a foreign address into a real call. Media is latched to the
    caller's first packet: a stranger's keys and audio are dropped and counted."""
    async with server(config()) as (uas, handler):
        sip = await UdpPeer.open()
        media = await UdpPeer.open()
        stranger = await UdpPeer.open("127.0.0.2")
        same_host = await UdpPeer.open("127.0.0.1")
        try:
            caller = Caller(sip, uas.port)
            caller.invite(media=("127.0.0.1", media.port))
            ok = await caller.final()
            caller.ack()
            await handler.wait_for(lambda: handler.started)
            ours = negotiate(parse_sdp(ok.body))
            target = ("127.0.0.1", ours.remote_port)
            # The stranger before the caller has spoken: not the signalled host, not latched.
            for n, digit in enumerate((11, 9)):
                stranger.send(key(digit, 1000 + n * 800, n), target)
            stranger.send(RtpPacket(8, 7, 0, 1, bytes([ALAW.silence]) * 160).build(), target)
            # The caller latches; afterwards even another port on the caller's host is foreign.
            media.send(key(5, 9000, 10), target)
            await handler.wait_for(lambda: handler.digits == ["5"])
            same_host.send(key(11, 20000, 20), target)
            media.send(key(1, 30000, 30), target)
            await handler.wait_for(lambda: len(handler.digits) == 2)
            assert handler.digits == ["5", "1"]
            assert handler.frames == []
            assert uas.drops[DropReason.FOREIGN_RTP] == 4
            call = handler.started[0]
            assert call.media.latched == ("127.0.0.1", media.port)
            # Our media goes to the latched address.
            assert parse_rtp(await media.recv_raw()).payload_type == 8
        finally:
            for peer in (sip, media, stranger, same_host):
                peer.close()


# --- 4. P-Asserted-Identity only from trusted proxies ----------------------------------------


PAI = '"A" <sip:+4930123@proxy;user=phone>, <tel:+4930123>'


@pytest.mark.parametrize(("source", "expected"), [("127.0.0.2", "+4930123"), ("127.0.0.1", None)])
async def test_asserted_identity_only_from_a_trusted_proxy(
    source: str, expected: str | None
) -> None:
    trusting = SipSettings(trusted_proxies=("127.0.0.2/32",))
    async with server(config(trusting)) as (uas, handler):
        sip = await UdpPeer.open(source)
        try:
            caller = Caller(sip, uas.port)
            caller.invite(
                media=(source, 9),
                extra=f"P-Asserted-Identity: {PAI}\r\n",
            )
            assert (await caller.final()).status == 200
            caller.ack()
            await handler.wait_for(lambda: handler.started)
            assert handler.started[0].asserted_identity == expected
        finally:
            sip.close()
