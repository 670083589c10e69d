"""ICE host candidates within the operator's UDP port range (`[voice] port_min/port_max`).

aiortc has no setting for it: aioice 0.13 binds each host candidate's socket to port 0 (any
port the kernel picks) inside ``Connection.get_component_candidates``. This module gives one
peer's ICE connections a replacement for that method that binds within the range, trying the
ports from a random start upwards, and otherwise gathers exactly as aioice does (server-
reflexive candidates from a STUN server, a relayed one from a TURN server). It leans on
aioice internals, so it is pinned by a test that reads the ports the service really offers
(tests/voice/test_ice.py); an aioice upgrade that moves them fails that test.
"""

from __future__ import annotations

import asyncio
import ipaddress
import random
import socket
import types
from typing import Any

import aioice
import structlog
from aioice import ice as aioice_ice
from aioice import turn as aioice_turn
from aioice.candidate import Candidate, candidate_foundation, candidate_priority
from aiortc import RTCPeerConnection

log = structlog.get_logger(__name__)


async def bind_in_range(
    connection: aioice.Connection, address: str, low: int, high: int
) -> tuple[asyncio.DatagramTransport, Any] | None:
    """A UDP socket for ``connection`` on ``address`` at a free port in ``low..high``."""
    loop = asyncio.get_running_loop()
    count = high - low + 1
    start = random.randrange(count)  # spreading ports, not a secret
    for i in range(count):
        port = low + (start + i) % count
        try:
            transport, protocol = await loop.create_datagram_endpoint(
                lambda: aioice_ice.StunProtocol(connection), local_addr=(address, port)
            )
        except OSError:
            continue
        return transport, protocol
    log.warning("voice_port_range_full", address=address, low=low, high=high)
    return None


def ranged_gatherer(low: int, high: int) -> Any:
    """``get_component_candidates`` for an aioice Connection, host sockets in ``low..high``."""

    async def get_component_candidates(
        self: aioice.Connection, component: int, addresses: list[str], timeout: int = 5
    ) -> list[Candidate]:
        candidates: list[Candidate] = []
        host_protocols = []
        for address in addresses:
            bound = await bind_in_range(self, address, low, high)
            if bound is None:
                continue
            transport, protocol = bound
            sock = transport.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(
                    socket.SOL_SOCKET, socket.SO_RCVBUF, aioice_turn.UDP_SOCKET_BUFFER_SIZE
                )
            host_protocols.append(protocol)
            name = transport.get_extra_info("sockname")
            protocol.local_candidate = Candidate(
                foundation=candidate_foundation("host", "udp", name[0]),
                component=component,
                transport="udp",
                priority=candidate_priority(component, "host"),
                host=name[0],
                port=name[1],
                type="host",
            )
            candidates.append(protocol.local_candidate)
        self._protocols += host_protocols

        tasks: list[asyncio.Task[Any]] = []
        if self.stun_server:
            for protocol in host_protocols:
                if ipaddress.ip_address(protocol.local_candidate.host).version == 4:
                    reflexive = aioice_ice.server_reflexive_candidate(protocol, self.stun_server)
                    tasks.append(asyncio.create_task(reflexive))
        if self.turn_server:
            relayed = aioice_ice.relayed_candidate(
                component=component,
                hide_related_address=self._transport_policy == aioice.TransportPolicy.RELAY,
                protocol_factory=lambda: aioice_ice.StunProtocol(self),
                turn_server=self.turn_server,
                turn_username=self.turn_username,
                turn_password=self.turn_password,
                turn_ssl=self.turn_ssl,
                turn_transport=self.turn_transport,
            )
            tasks.append(asyncio.create_task(relayed))
        if tasks:
            done, pending = await asyncio.wait(tasks, timeout=timeout)
            for task in done:
                if task.exception() is None:
                    candidate, relay_protocol = task.result()
                    candidates.append(candidate)
                    if relay_protocol is not None:
                        self._protocols.append(relay_protocol)
            for task in pending:
                task.cancel()
        return candidates

    return get_component_candidates


def limit_ports(pc: RTCPeerConnection, low: int, high: int) -> None:
    """Make every ICE transport of ``pc`` (made by setRemoteDescription) gather in range.

    Call it after the remote offer is applied and before the answer is made: gathering
    starts with ``setLocalDescription``."""
    gather = ranged_gatherer(low, high)
    for transceiver in pc.getTransceivers():
        ice = transceiver.receiver.transport.transport
        connection = ice.iceGatherer._connection
        setattr(connection, "get_component_candidates", types.MethodType(gather, connection))  # noqa: B010 - an instance's method, replaced on purpose
