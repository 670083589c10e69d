"""Kamailio with the shipped configuration (deploy/kamailio/kamailio.cfg) as a test's child
process, and a minimal SIP caller that dials through it.

Kamailio runs in the foreground (`-DD -E`), listening on 127.0.0.2 (another loopback address,
so the Vollmond nodes can trust exactly the proxy); the test's own settings reach the unchanged
config file as preprocessor defines (`-A`), the node list is written into the test's directory.
Its state is read with `kamcmd` over the control socket.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import secrets
import shutil
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from tests.phone.helpers import UdpPeer
from tests.phone.test_sipp import free_udp_port
from vollmond.phone.sip.message import (
    SipRequest,
    SipResponse,
    header_params,
    header_uri,
    parse_message,
    response_for,
)

CONFIG = Path(__file__).resolve().parents[2] / "deploy" / "kamailio" / "kamailio.cfg"
PROXY_HOST = "127.0.0.2"
START_TIMEOUT_S = 20.0
#: A node's operator settings (`--config`) behind the proxy: it takes calls as the proxy hands
#: them on (the caller's media address is not the signalling source, `docs/security.md`).
TRUSTING_THE_PROXY = f'[sip]\ntrusted_proxies = ["{PROXY_HOST}"]\n'


@dataclass
class Kamailio:
    """One Kamailio process in front of `nodes` (SIP ports on 127.0.0.1)."""

    root: Path
    nodes: list[int]
    port: int = field(default_factory=free_udp_port)
    #: Seconds between OPTIONS pings to each node.
    ping_interval: int = 1
    #: How long a node may take to answer (the shipped 2 s, longer here: on a loaded test
    #: machine a node answering late is not what these tests are about).
    node_timeout_ms: int = 5000
    process: asyncio.subprocess.Process | None = None

    @property
    def control(self) -> str:
        return f"unix:{self.root / 'kamailio.ctl'}"

    async def start(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / "run").mkdir(exist_ok=True)
        config = self.root / "kamailio.cfg"
        shutil.copyfile(CONFIG, config)
        nodes = self.root / "dispatcher.list"
        nodes.write_text("".join(f"1 sip:127.0.0.1:{port}\n" for port in self.nodes))
        log = (self.root / "kamailio.log").open("wb")
        self.process = await asyncio.create_subprocess_exec(
            "kamailio",
            "-f", str(config),
            "-DD", "-E",
            "-m", "32", "-M", "4",
            "-Y", str(self.root / "run"),
            "-A", f"LISTEN=udp:{PROXY_HOST}:{self.port}",
            "-A", f'DISPATCHER_LIST="{nodes}"',
            "-A", f'CTL_SOCKET="{self.control}"',
            "-A", f"PING_INTERVAL={self.ping_interval}",
            "-A", f"NODE_TIMEOUT_MS={self.node_timeout_ms}",
            stdin=asyncio.subprocess.DEVNULL,
            stdout=log,
            stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        log.close()
        async with asyncio.timeout(START_TIMEOUT_S):
            while not await self._answers():
                if self.process.returncode is not None:
                    raise RuntimeError(f"kamailio exited early:\n{self.log_text()}")
                await asyncio.sleep(0.1)

    async def _answers(self) -> bool:
        """Kamailio answers an OPTIONS aimed at itself (its own keepalive branch)."""
        peer = await UdpPeer.open("127.0.0.1")
        try:
            call_id = secrets.token_hex(8)
            peer.send(
                (
                    f"OPTIONS sip:{PROXY_HOST}:{self.port} SIP/2.0\r\n"
                    f"Via: SIP/2.0/UDP 127.0.0.1:{peer.port};branch=z9hG4bK{call_id}\r\n"
                    f"From: <sip:probe@127.0.0.1>;tag={call_id}\r\n"
                    f"To: <sip:{PROXY_HOST}>\r\nCall-ID: {call_id}\r\nCSeq: 1 OPTIONS\r\n"
                    "Max-Forwards: 70\r\nContent-Length: 0\r\n\r\n"
                ).encode(),
                (PROXY_HOST, self.port),
            )
            return (await peer.response(timeout=0.5)).status == 200
        except TimeoutError:
            return False
        finally:
            peer.close()

    async def node_flags(self) -> dict[int, str]:
        """Each node's dispatcher flags: "AP" active (and probed), "IP" inactive (taken out)."""
        proc = await asyncio.create_subprocess_exec(
            "kamcmd", "-s", self.control, "dispatcher.list",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        out, _ = await proc.communicate()
        pairs = re.findall(r"URI: sip:127\.0\.0\.1:(\d+)\s+FLAGS: (\w+)", out.decode())
        return {int(port): flags for port, flags in pairs}

    async def wait_flags(self, wanted: dict[int, str], timeout: float = 60.0) -> None:
        seen: dict[int, str] = {}
        try:
            async with asyncio.timeout(timeout):
                while (seen := await self.node_flags()) != wanted:
                    await asyncio.sleep(0.1)
        except TimeoutError:
            raise AssertionError(f"nodes {seen}, not {wanted}, after {timeout} s") from None

    async def stop(self) -> None:
        if self.process is None or self.process.returncode is not None:
            return
        self.process.terminate()
        try:
            await asyncio.wait_for(self.process.wait(), 10)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()

    def log_text(self) -> str:
        return (self.root / "kamailio.log").read_text(errors="replace")


@contextlib.asynccontextmanager
async def kamailio(
    root: Path, nodes: Iterable[int], *, ping_interval: int = 1
) -> AsyncIterator[Kamailio]:
    proxy = Kamailio(root, list(nodes), ping_interval=ping_interval)
    try:
        await proxy.start()
        yield proxy
    finally:
        await proxy.stop()


SDP = (
    "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
    "m=audio {port} RTP/AVP 0 101\r\na=rtpmap:0 PCMU/8000\r\n"
    "a=rtpmap:101 telephone-event/8000\r\na=fmtp:101 0-15\r\na=sendrecv\r\n"
)


class ProxiedDialog:
    """One call placed through the proxy by a bare UAC: INVITE, ACK, INFO and BYE, the
    in-dialog ones sent along the Route set the 200 OK's Record-Route gave (RFC 3261 §12)."""

    def __init__(self, peer: UdpPeer, proxy: Kamailio) -> None:
        self.peer = peer
        self.proxy = (PROXY_HOST, proxy.port)
        self.call_id = secrets.token_hex(8)
        self.from_tag = secrets.token_hex(4)
        self.to_tag = ""
        self.cseq = 1
        self.route: list[str] = []
        self.target = f"sip:1234@{PROXY_HOST}:{proxy.port}"
        self.answer: SipResponse | None = None

    def _head(self, method: str, uri: str, cseq: int) -> str:
        to = f"<sip:1234@{PROXY_HOST}>" + (f";tag={self.to_tag}" if self.to_tag else "")
        routes = "".join(f"Route: {r}\r\n" for r in self.route) if method != "INVITE" else ""
        return (
            f"{method} {uri} SIP/2.0\r\n"
            f"Via: SIP/2.0/UDP 127.0.0.1:{self.peer.port};branch=z9hG4bK{secrets.token_hex(6)}"
            ";rport\r\n"
            f"Max-Forwards: 70\r\n{routes}"
            f"From: <sip:caller@127.0.0.1>;tag={self.from_tag}\r\nTo: {to}\r\n"
            f"Call-ID: {self.call_id}\r\nCSeq: {cseq} {method}\r\n"
            f"Contact: <sip:caller@127.0.0.1:{self.peer.port}>\r\n"
        )

    async def _final(self, method: str, timeout: float = 20.0) -> SipResponse:
        async with asyncio.timeout(timeout):
            while True:
                response = await self.peer.response(timeout)
                cseq = response.get("CSeq") or ""
                if (
                    response.get("Call-ID") == self.call_id
                    and cseq.endswith(method)
                    and response.status >= 200
                ):
                    return response

    async def invite(self, media_port: int = 9) -> SipResponse:
        body = SDP.format(port=media_port)
        head = self._head("INVITE", self.target, self.cseq)
        self.peer.send(
            (
                head + f"Content-Type: application/sdp\r\nContent-Length: {len(body)}\r\n\r\n{body}"
            ).encode(),
            self.proxy,
        )
        answer = await self._final("INVITE")
        self.answer = answer
        if answer.status == 200:
            self.to_tag = header_params(answer.require("To"))["tag"]
            # The UAC's route set is the Record-Route list in reverse (RFC 3261 §12.1.2).
            self.route = list(reversed(answer.get_all("Record-Route")))
            self.target = header_uri(answer.require("Contact"))
            self._request("ACK", self.cseq)
        return answer

    def _request(self, method: str, cseq: int, body: str = "", ctype: str = "") -> None:
        head = self._head(method, self.target, cseq)
        if body:
            head += f"Content-Type: {ctype}\r\n"
        self.peer.send((head + f"Content-Length: {len(body)}\r\n\r\n{body}").encode(), self.proxy)

    async def info(self, digit: str) -> SipResponse:
        self.cseq += 1
        self._request(
            "INFO", self.cseq, f"Signal={digit}\r\nDuration=160\r\n", "application/dtmf-relay"
        )
        return await self._final("INFO")

    async def bye(self) -> SipResponse:
        self.cseq += 1
        self._request("BYE", self.cseq)
        return await self._final("BYE")

    async def answer_bye(self, timeout: float = 10.0) -> tuple[SipRequest, tuple[str, int]]:
        """Wait for the node's BYE of this call, answer it 200, and return it with the address
        it came from."""
        async with asyncio.timeout(timeout):
            while True:
                data, addr = await self.peer.queue.get()
                message = parse_message(data)
                if (
                    isinstance(message, SipRequest)
                    and message.method == "BYE"
                    and message.get("Call-ID") == self.call_id
                ):
                    self.peer.send(response_for(message, 200).serialise(), addr)
                    return message, addr

    @property
    def node_port(self) -> int:
        """The SIP port of the node that answered (its Contact)."""
        assert self.answer is not None
        found = re.search(r"@?[\d.]+:(\d+)", header_uri(self.answer.require("Contact")))
        assert found is not None, self.answer.require("Contact")
        return int(found.group(1))


async def landing_of_a_call(proxy: Kamailio) -> int:
    """Place one call through the proxy and hang up at once: the SIP port of the node that
    answered it. The dispatcher's round robin moves on by one."""
    peer = await UdpPeer.open("127.0.0.1")
    try:
        dialog = ProxiedDialog(peer, proxy)
        answer = await dialog.invite()
        assert answer.status == 200, answer
        assert (await dialog.bye()).status == 200
        return dialog.node_port
    finally:
        peer.close()


async def round_robin_past(proxy: Kamailio, port: int) -> None:
    """Place short calls until one lands on the node at `port`: with the round robin over n
    live nodes, the next n - 1 calls then land on the n - 1 others, one each — a caller can
    be sent to a node through the proxy without knowing where the rotation stands."""
    landed: list[int] = []
    while port not in landed:
        assert len(landed) < 2 * len(proxy.nodes), f"no call landed on {port}: {landed}"
        landed.append(await landing_of_a_call(proxy))
