"""Test doubles for the telephony tests: a recording CallHandler and a scripted UDP SIP peer."""

from __future__ import annotations

import asyncio
import secrets
from dataclasses import dataclass, field
from typing import cast

import numpy as np
import numpy.typing as npt

from vollmond.phone.media import AudioSource, Int16Array
from vollmond.phone.sip.message import SipMessage, SipRequest, SipResponse, parse_message
from vollmond.phone.sip.uas import Call, EndReason


@dataclass
class RecordingHandler:
    """Records every callback and lets a test wait for them."""

    started: list[Call] = field(default_factory=list)
    digits: list[str] = field(default_factory=list)
    frames: list[Int16Array] = field(default_factory=list)
    ended: list[tuple[Call, EndReason]] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    source: AudioSource | None = None

    def on_call_started(self, call: Call) -> None:
        self.started.append(call)
        if self.source is not None:
            call.set_source(self.source)
        self.changed.set()

    def on_dtmf(self, call: Call, digit: str) -> None:
        self.digits.append(digit)
        self.changed.set()

    def on_audio(self, call: Call, samples: Int16Array) -> None:
        self.frames.append(samples)
        self.changed.set()

    def on_call_ended(self, call: Call, reason: EndReason) -> None:
        self.ended.append((call, reason))
        self.changed.set()

    async def wait_for(self, predicate: object, timeout: float = 5.0) -> None:
        """Wait until ``predicate()`` is true."""
        assert callable(predicate)
        async with asyncio.timeout(timeout):
            while not predicate():
                self.changed.clear()
                await self.changed.wait()


class ToneSource:
    """An audio source playing a continuous sine, frame after frame, without phase jumps."""

    def __init__(self, freq: float, amplitude: float = 8000.0) -> None:
        self.freq = freq
        self.amplitude = amplitude
        self.frames = 0

    def __call__(self) -> Int16Array:
        n = np.arange(self.frames * 160, (self.frames + 1) * 160)
        self.frames += 1
        return (self.amplitude * np.sin(2 * np.pi * self.freq * n / 8000)).astype(np.int16)


def dominant_frequency(samples: npt.NDArray[np.int16] | npt.NDArray[np.float64]) -> float:
    """The strongest frequency in a stretch of 8 kHz audio, in Hz."""
    x = samples.astype(np.float64)
    spectrum = np.abs(np.fft.rfft(x * np.hanning(len(x))))
    return float(np.argmax(spectrum) * 8000 / len(x))


class UdpPeer(asyncio.DatagramProtocol):
    """A UDP socket on 127.0.0.1 that queues what it receives."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[tuple[bytes, tuple[str, int]]] = asyncio.Queue()
        self.transport: asyncio.DatagramTransport | None = None

    @classmethod
    async def open(cls, host: str = "127.0.0.1", port: int = 0) -> UdpPeer:
        """Bind on ``host`` (any 127.x.y.z works on Linux: another source address)."""
        loop = asyncio.get_running_loop()
        _, peer = await loop.create_datagram_endpoint(cls, local_addr=(host, port))
        return peer

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # Datagram endpoints always get a datagram transport (not a subclass in CPython 3.11).
        self.transport = cast(asyncio.DatagramTransport, transport)

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        self.queue.put_nowait((data, addr))

    @property
    def port(self) -> int:
        assert self.transport is not None
        port: int = self.transport.get_extra_info("sockname")[1]
        return port

    def send(self, data: bytes, addr: tuple[str, int]) -> None:
        assert self.transport is not None
        self.transport.sendto(data, addr)

    async def recv_raw(self, timeout: float = 3.0) -> bytes:
        data, _ = await asyncio.wait_for(self.queue.get(), timeout)
        return data

    async def recv(self, timeout: float = 3.0) -> SipMessage:
        return parse_message(await self.recv_raw(timeout))

    async def response(self, timeout: float = 3.0) -> SipResponse:
        msg = await self.recv(timeout)
        assert isinstance(msg, SipResponse), msg
        return msg

    async def request(self, timeout: float = 3.0) -> SipRequest:
        msg = await self.recv(timeout)
        assert isinstance(msg, SipRequest), msg
        return msg

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


def sdp_offer(rtp_port: int, *, formats: str = "8 0 101", direction: str = "sendrecv") -> bytes:
    return (
        "v=0\r\n"
        "o=test 1 1 IN IP4 127.0.0.1\r\n"
        "s=-\r\n"
        "c=IN IP4 127.0.0.1\r\n"
        "t=0 0\r\n"
        f"m=audio {rtp_port} RTP/AVP {formats}\r\n"
        "a=rtpmap:8 PCMA/8000\r\n"
        "a=rtpmap:0 PCMU/8000\r\n"
        "a=rtpmap:101 telephone-event/8000\r\n"
        "a=fmtp:101 0-15\r\n"
        f"a={direction}\r\n"
    ).encode()


@dataclass
class Dialog:
    """The caller's side of one call, building requests the way a phone would."""

    peer: UdpPeer
    server: tuple[str, int]
    call_id: str = field(default_factory=lambda: secrets.token_hex(8) + "@test")
    from_tag: str = field(default_factory=lambda: secrets.token_hex(4))
    to_tag: str = ""
    cseq: int = 1
    record_route: bool = True

    def _headers(self, method: str, branch: str, cseq: int | None = None) -> str:
        to = "<sip:1234@127.0.0.1>" + (f";tag={self.to_tag}" if self.to_tag else "")
        rr = f"Record-Route: <sip:127.0.0.1:{self.peer.port};lr>\r\n" if self.record_route else ""
        return (
            f"Via: SIP/2.0/UDP 127.0.0.1:{self.peer.port};branch={branch};rport\r\n"
            "Max-Forwards: 70\r\n"
            f"{rr}"
            f'From: "Test Caller" <sip:caller@127.0.0.1>;tag={self.from_tag}\r\n'
            f"To: {to}\r\n"
            f"Call-ID: {self.call_id}\r\n"
            f"CSeq: {self.cseq if cseq is None else cseq} {method}\r\n"
            f"Contact: <sip:caller@127.0.0.1:{self.peer.port}>\r\n"
        )

    def request(
        self,
        method: str,
        *,
        branch: str | None = None,
        body: bytes = b"",
        content_type: str | None = None,
        cseq: int | None = None,
    ) -> str:
        """Send a request; returns its branch."""
        branch = branch or "z9hG4bK" + secrets.token_hex(6)
        ctype = f"Content-Type: {content_type}\r\n" if content_type else ""
        head = (
            f"{method} sip:1234@127.0.0.1 SIP/2.0\r\n"
            + self._headers(method, branch, cseq)
            + ctype
            + f"Content-Length: {len(body)}\r\n\r\n"
        )
        self.peer.send(head.encode() + body, self.server)
        return branch

    def invite(self, rtp_port: int, **kwargs: str) -> str:
        return self.request(
            "INVITE", body=sdp_offer(rtp_port, **kwargs), content_type="application/sdp"
        )

    def ack(self, branch: str | None = None) -> None:
        self.request("ACK", branch=branch)

    def next(self, method: str, **kwargs: object) -> str:
        self.cseq += 1
        body = kwargs.get("body", b"")
        ctype = kwargs.get("content_type")
        assert isinstance(body, bytes)
        assert ctype is None or isinstance(ctype, str)
        return self.request(method, body=body, content_type=ctype)


class CollectingWriter:
    """Stands for a media worker's pipe to the signalling process: keeps what it is sent."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.sent.append(data)

    def is_closing(self) -> bool:
        return False
