"""The uvicorn side of `socket_handoff`: where an upgrade request is read, and where a passed
socket is adopted.

uvicorn reads the HTTP request and, for a WebSocket upgrade, hands the connection to its
WebSocket protocol in `handle_websocket_upgrade` — the one moment the connection is plain
bytes known in full and nothing has been answered. The subclass asks the handoff there; the
server subclass starts the worker's inbox once uvicorn's own state (config, server state,
lifespan state) exists, so an adopted socket gets the same protocol as an accepted one.
"""

from __future__ import annotations

import socket
from typing import Any, ClassVar

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from vollmond.service.shards.socket_handoff import SocketHandoff


class _OwnerRoutingH11(H11Protocol):
    handoff: ClassVar[SocketHandoff]

    def handle_websocket_upgrade(self, event: h11.Request) -> None:
        owner = None
        if self.transport.get_extra_info("sslcontext") is None:  # a TLS session cannot move
            owner = self.handoff.owner_elsewhere(event.target)
        conn = self.transport.get_extra_info("socket")
        if owner is None or conn is None:
            super().handle_websocket_upgrade(event)
            return

        def done(sent: bool) -> None:
            if self.transport.is_closing():
                return  # the client gave up meanwhile
            if sent:
                # The owner has its own descriptor of the connection: closing this one sends
                # nothing to the client.
                self.connections.discard(self)
                self.transport.close()
            else:
                super(_OwnerRoutingH11, self).handle_websocket_upgrade(event)

        # The client sends nothing more before the handshake's answer, so while the owner's
        # inbox is full the connection simply waits here.
        self.handoff.pass_soon(owner, _request(event, self.headers), conn.fileno(), done)


def _request(event: h11.Request, headers: list[tuple[bytes, bytes]]) -> bytes:
    """The upgrade request again, as uvicorn rebuilds it for its WebSocket protocol."""
    out = [event.method, b" ", event.target, b" HTTP/1.1\r\n"]
    for name, value in headers:
        out += [name, b": ", value, b"\r\n"]
    out.append(b"\r\n")
    return b"".join(out)


class HandoffServer(uvicorn.Server):
    """A uvicorn server whose WebSockets reach the owners of their games."""

    def __init__(self, config: uvicorn.Config, handoff: SocketHandoff) -> None:
        protocol = type("OwnerRoutingH11", (_OwnerRoutingH11,), {"handoff": handoff})
        config.http = protocol
        super().__init__(config)
        self.handoff = handoff

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        config = self.config

        def adopt() -> Any:
            return config.http_protocol_class(  # type: ignore[call-arg]
                config=config, server_state=self.server_state, app_state=self.lifespan.state
            )

        self.handoff.listen(adopt)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self.handoff.close()
        await super().shutdown(sockets)
