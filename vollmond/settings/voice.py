"""How browsers reach the service's voice (WebRTC ICE) and how many peers it takes
(docs/voice.md, docs/security.md "Browser voice").

By default the service offers only its host candidates and asks no outside server: a browser
on the same network (or a server with a public address of its own) connects directly, and no
third party (not even a public STUN server) learns who plays. Behind a NAT the operator names
the public address the NAT forwards 1:1 to this host, or a STUN/TURN server (coturn).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

ICE_SCHEMES = ("stun:", "turn:", "turns:")


@dataclass(frozen=True, slots=True)
class IceServer:
    """One STUN or TURN server as the browser and the service both use it."""

    urls: tuple[str, ...]
    username: str | None = None
    credential: str | None = None

    def __post_init__(self) -> None:
        if not self.urls:
            raise ValueError("an ICE server needs at least one URL")
        for url in self.urls:
            if not url.startswith(ICE_SCHEMES):
                raise ValueError(f"ICE server URL {url!r} must start with stun:, turn: or turns:")


@dataclass(frozen=True, slots=True)
class VoiceSettings:
    """The browser voice's reachability and limits."""

    # Browser voice on or off (off: the page shows no microphone and offers are refused).
    enabled: bool = True
    # The public IPv4 address a 1:1 NAT forwards to this host: every host candidate is also
    # offered with this address and the same port. Empty: host candidates only.
    public_address: str = ""
    # STUN/TURN servers for the service's own candidates and for the browsers (given to them in
    # the answer to `voice_config`). Empty: none, no outside server is asked anything.
    ice_servers: tuple[IceServer, ...] = ()
    # Offer only relayed candidates (all media through the TURN server; needs one).
    relay_only: bool = False
    # Browser voice peers at once on this service; a further offer is refused (`voice_full`).
    max_peers: int = 200
    # Seconds a peer may take to connect before it is closed.
    connect_timeout_s: float = 15.0
    # The UDP ports the service's own ICE candidates bind to (both 0: any port the kernel
    # picks). aiortc has no such option; `vollmond.voice.ports` binds within the range.
    port_min: int = 0
    port_max: int = 0
    # TURN with time-limited credentials (coturn's `use-auth-secret`, the "TURN REST API"):
    # every page gets its own user `expiry:name` whose password is derived from this shared
    # secret, so no lasting TURN password is handed out. Both empty: not used.
    turn_urls: tuple[str, ...] = ()
    turn_secret: str = ""
    # How long such a credential is valid, in seconds (a reload gets a fresh one).
    turn_ttl_s: int = 12 * 3600

    def __post_init__(self) -> None:
        if self.public_address:
            ipaddress.IPv4Address(self.public_address)  # ValueError names the bad address
        if self.max_peers < 1:
            raise ValueError("max_peers must be at least 1")
        if not self.connect_timeout_s > 0:
            raise ValueError("connect_timeout_s must be positive")
        if (self.port_min, self.port_max) != (0, 0) and not (
            1024 <= self.port_min <= self.port_max <= 65535
        ):
            raise ValueError("port_min..port_max must be a range within 1024..65535")
        if bool(self.turn_urls) != bool(self.turn_secret):
            raise ValueError("turn_urls and turn_secret go together")
        for url in self.turn_urls:
            if not url.startswith(("turn:", "turns:")):
                raise ValueError(f"TURN URL {url!r} must start with turn: or turns:")
        if not self.turn_ttl_s > 0:
            raise ValueError("turn_ttl_s must be positive")
        if (
            self.relay_only
            and not self.turn_urls
            and not any(
                url.startswith(("turn:", "turns:"))
                for server in self.ice_servers
                for url in server.urls
            )
        ):
            raise ValueError("relay_only needs a TURN server (turn_urls or ice_servers)")
