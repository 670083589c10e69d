"""Where a call's RTP is handled: in this process, or in a media process.

The SIP server asks its :class:`MediaBackend` for a call's media when an INVITE comes and gets
a :class:`CallMedia`: an in-process :class:`~vollmond.phone.media.RtpEndpoint` on the shared
clock (:class:`LocalMedia`, ``[phone] media_processes = 0``) or a stand-in for an endpoint in a
media process (:class:`vollmond.phone.mediaproc.client.MediaProcesses`). Both take the call's
frames from the same audio source and give back the same decoded audio and key presses, so
the SIP server and the sessions do not know which one they have.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from vollmond.phone.media import (
    AudioSource,
    ClockStats,
    DropCallback,
    Int16Array,
    MediaParams,
    MediaTicker,
    RtpEndpoint,
)

#: Told when a call's media is gone for good (its media process died): hang the call up.
LostCallback = Callable[["CallMedia"], None]


class CallMedia(Protocol):
    """One call's media as the SIP server and the tests see it."""

    #: The peer's address once its first packet latched it.
    latched: tuple[str, int] | None
    #: When the last packet came (event loop time); the SIP server's RTP timeout reads it.
    last_received: float
    packets_sent: int
    packets_unsent: int
    packets_received: int
    packets_foreign: int
    packets_dropped: int

    @property
    def local_port(self) -> int: ...

    @property
    def params(self) -> MediaParams: ...

    def update(self, params: MediaParams) -> None: ...

    def set_source(self, source: AudioSource | None) -> None: ...

    def start(self) -> None: ...

    def close(self) -> None: ...


class MediaBackend(Protocol):
    """Opens calls' media; started with the SIP server and closed after its calls."""

    on_lost: LostCallback | None

    async def start(self) -> None: ...

    async def open(
        self,
        host: str,
        params: MediaParams,
        on_audio: Callable[[Int16Array], None],
        on_digit: Callable[[str], None],
        on_drop: DropCallback | None = None,
    ) -> CallMedia: ...

    async def close(self) -> None: ...

    def clock_stats(self) -> ClockStats:
        """The media clocks' counters (all processes' together)."""
        ...


class LocalMedia:
    """Every call's RTP on this event loop, on one shared :class:`MediaTicker`."""

    def __init__(self) -> None:
        self.ticker = MediaTicker()
        self.on_lost: LostCallback | None = None  # an in-process endpoint is never lost

    async def start(self) -> None:
        """Nothing to start: the clock runs while a call is on it."""

    async def open(
        self,
        host: str,
        params: MediaParams,
        on_audio: Callable[[Int16Array], None],
        on_digit: Callable[[str], None],
        on_drop: DropCallback | None = None,
    ) -> RtpEndpoint:
        return await RtpEndpoint.open(host, params, on_audio, on_digit, on_drop, ticker=self.ticker)

    async def close(self) -> None:
        """The endpoints are closed with their calls."""

    def clock_stats(self) -> ClockStats:
        return self.ticker.clock_stats()
