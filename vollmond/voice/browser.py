"""The browser's voice, the service's side: answers offers, keeps the peers, one 20 ms clock.

:class:`BrowserVoice` is made at every start (the page's voice settings, its ICE servers); the
peers it opens, :class:`~vollmond.voice.webrtc.BrowserPeer` (one WebRTC peer per WebSocket, a
line of the shared voice rooms), live in :mod:`vollmond.voice.webrtc` with aiortc and PyAV,
which are imported with the first peer: a process that serves no browser voice never loads
them (docs/decisions.md, "Start-up").
"""

from __future__ import annotations

import asyncio
import importlib
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import structlog

from vollmond.engine.ruleset import SPECTATORS, Listener
from vollmond.settings.voice import VoiceSettings
from vollmond.voice.conference import ConferenceSeat
from vollmond.voice.frames import FRAME_SECONDS
from vollmond.voice.rooms import VoiceRooms
from vollmond.voice.turn import turn_credential

if TYPE_CHECKING:
    from vollmond.voice.webrtc import BrowserPeer

log = structlog.get_logger(__name__)

WEBRTC = "vollmond.voice.webrtc"
"""The peers' module (aiortc, PyAV), imported with the first peer (`_load_webrtc`)."""

#: A clock this many ticks late catches up tick by tick (as the telephone's RtpClock does);
#: later than that, the missed ticks are skipped.
MAX_LAG_TICKS = 5

#: Told the peer's status for the page: {"room": ..., "other": ..., "speaking": [...]}.
StatusCallback = Callable[[dict[str, Any]], None]
#: Asked for every 20 ms of the browser's voice: is its speaker muted by a moderator now (O5)?
#: Must answer from memory (the service's enforcer keeps a per-person cache).
MutedCheck = Callable[[], bool]


class VoiceError(Exception):
    """An offer or candidate the service cannot take; ``code`` goes back to the client."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class LineId:
    """Whose line a peer is: the game, the listener (seat or spectators), the source seat."""

    game_id: str
    listener: Listener
    seat: int | None  # None: a spectator feeds no room
    # A conference room's line (X2): the room's own voice instead of a game's room; the
    # room decides per frame whether the member is heard (talking, not muted).
    conference: ConferenceSeat | None = None


class VoiceClock:
    """One 20 ms clock for every peer, on an absolute schedule, so the wake-ups do not grow
    with the number of peers. A little late, it catches up (a busy event loop loses no audio);
    after a stall of more than MAX_LAG_TICKS it skips, never bursting a backlog."""

    def __init__(self, on_tick: Callable[[], None]) -> None:
        self._on_tick = on_tick
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        start = loop.time()
        index = 0
        while True:
            index += 1
            due = start + index * FRAME_SECONDS
            await asyncio.sleep(max(0.0, due - loop.time()))
            late = int((loop.time() - due) / FRAME_SECONDS)
            if late > MAX_LAG_TICKS:
                index += late  # after a stall: the next tick on schedule, no burst
            try:
                self._on_tick()
            except Exception:
                log.exception("voice_tick_failed")


class BrowserVoice:
    """The service's WebRTC side: answers offers and drives every peer's line."""

    def __init__(self, rooms: VoiceRooms, settings: VoiceSettings | None = None) -> None:
        self.rooms = rooms
        self.settings = settings or VoiceSettings()
        self.peers: dict[BrowserPeer, None] = {}
        self.clock = VoiceClock(self._tick)
        self.ticks = 0
        self.tick_seconds = 0.0  # time spent in ticks (for the benchmark)

    def ice_servers(self, name: str) -> list[dict[str, Any]]:
        """The operator's STUN/TURN servers, and the TURN servers of ``turn_urls`` with a
        fresh time-limited credential for ``name`` (coturn's ``use-auth-secret``)."""
        settings = self.settings
        servers: list[dict[str, Any]] = [
            {
                "urls": list(s.urls),
                **({"username": s.username} if s.username else {}),
                **({"credential": s.credential} if s.credential else {}),
            }
            for s in settings.ice_servers
        ]
        if settings.turn_urls:
            cred = turn_credential(settings.turn_secret, name, time.time(), settings.turn_ttl_s)
            servers.append(
                {
                    "urls": list(settings.turn_urls),
                    "username": cred.username,
                    "credential": cred.password,
                }
            )
        return servers

    def client_config(self, name: str = "vollmond") -> dict[str, Any]:
        """What the page needs to open its peer connection (sent in `welcome.voice`);
        ``name`` is the TURN user the time-limited credential is made for (game and seat)."""
        return {
            "enabled": self.settings.enabled,
            "ice_servers": self.ice_servers(name),
            "relay_only": self.settings.relay_only,
        }

    def publish(self, sdp: str) -> str:
        """Add the public address (a 1:1 NAT) to every IPv4 host candidate of an answer."""
        public = self.settings.public_address
        if not public:
            return sdp
        lines = []
        for line in sdp.split("\r\n"):
            lines.append(line)
            bits = line.split()
            if line.startswith("a=candidate:") and "host" in bits[7:8] and ":" not in bits[4]:
                nat = [*bits]
                nat[0] = "a=candidate:" + "nat" + bits[0].removeprefix("a=candidate:")
                nat[4] = public
                nat[7] = "srflx"
                lines.append(" ".join([*nat[:8], "raddr", bits[4], "rport", bits[5]]))
        return "\r\n".join(lines)

    async def open(
        self,
        line: LineId,
        offer_sdp: str,
        on_status: StatusCallback | None = None,
        muted: MutedCheck | None = None,
    ) -> tuple[BrowserPeer, str]:
        """A new peer for ``line`` answering ``offer_sdp``; ``muted`` keeps a moderator's mute
        (its speaker's voice stays out of the rooms while it answers True)."""
        if not self.settings.enabled:
            raise VoiceError("voice_disabled", "browser voice is switched off on this service")
        await _load_webrtc()
        if len(self.peers) >= self.settings.max_peers:
            raise VoiceError("voice_full", "too many voice connections on this service")
        from vollmond.voice.webrtc import BrowserPeer  # noqa: PLC0415 - loaded just above

        peer = BrowserPeer(self, line, on_status, muted)
        self.peers[peer] = None
        try:
            sdp = await peer.answer(offer_sdp)
        except BaseException:
            await peer.close()
            raise
        self.clock.start()
        log.info("voice_peer_opened", game=line.game_id, seat=line.seat)
        return peer, sdp

    def forget(self, peer: BrowserPeer) -> None:
        self.peers.pop(peer, None)
        self.rooms.attach(peer, None)
        if self.rooms.relay is not None:
            self.rooms.relay.unlink(peer)
        if not self.peers:
            self.clock.stop()

    def _tick(self) -> None:
        began = time.perf_counter()
        self.ticks += 1
        for peer in list(self.peers):
            try:
                peer.tick()
            except Exception:
                log.exception("voice_peer_tick_failed", game=peer.line.game_id)
        self.tick_seconds += time.perf_counter() - began

    async def close(self) -> None:
        for peer in list(self.peers):
            await peer.close()
        self.clock.stop()


async def _load_webrtc() -> None:
    """aiortc and PyAV (0.2 s of CPU to import) come with the first peer, not with every
    start (start-up cost, issue 16), and load in a thread, so that the games and calls on
    the event loop do not wait for them."""
    if WEBRTC not in sys.modules:
        await asyncio.to_thread(importlib.import_module, WEBRTC)


def listener_of(seat: int | None) -> Listener:
    """The row a WebSocket's viewer hears: its seat, or the spectators'."""
    return SPECTATORS if seat is None else seat
