"""A call as the application sees it, and the interface the application implements.

Split from the server so game code can depend on these small types without the SIP machinery.
"""

from __future__ import annotations

import asyncio
import enum
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from vollmond.phone.callmedia import CallMedia
from vollmond.phone.media import AudioSource, Int16Array
from vollmond.phone.sdp import Negotiated
from vollmond.phone.sip.message import header_uri


class EndReason(enum.StrEnum):
    """Why a call ended, as reported to :meth:`CallHandler.on_call_ended`."""

    REMOTE_BYE = "remote-bye"
    LOCAL_HANGUP = "local-hangup"
    RTP_TIMEOUT = "rtp-timeout"
    SESSION_TIMEOUT = "session-timeout"
    ACK_TIMEOUT = "ack-timeout"
    SHUTDOWN = "shutdown"
    #: The call's media process ended (docs/voice.md, "The media process").
    MEDIA_FAILED = "media-failed"


class CallHandler(Protocol):
    """What the application sees of telephony. Called on the event loop; must not block."""

    def on_call_started(self, call: Call) -> None:
        """The call is answered and confirmed by ACK; media flows from now on."""

    def on_dtmf(self, call: Call, digit: str) -> None:
        """A key press, from RFC 4733, SIP INFO or in-band tones."""

    def on_audio(self, call: Call, samples: Int16Array) -> None:
        """One received frame of decoded audio (normally 160 samples)."""

    def on_call_ended(self, call: Call, reason: EndReason) -> None:
        """The call is over; called once, only for calls that started."""


class CallState(enum.Enum):
    """Dialog progress of a call."""

    RINGING = "ringing"
    ANSWERED = "answered"
    CONFIRMED = "confirmed"
    ENDED = "ended"


@dataclass(eq=False)
class Call:
    """One dialog with its media endpoint. The application reads it and may hang it up."""

    call_id: str
    local_tag: str
    remote_tag: str
    from_header: str
    to_header: str
    remote_target: str
    route_set: tuple[str, ...]
    peer: tuple[str, int]
    negotiated: Negotiated
    media: CallMedia
    state: CallState = CallState.RINGING
    sdp_version: int = 1
    local_cseq: int = field(default_factory=lambda: secrets.randbelow(10_000) + 1)
    invite_cseq: int = 0
    #: We sent the offer (INVITE or re-INVITE without SDP); the answer comes in the ACK.
    awaiting_answer: bool = False
    #: The caller's number as asserted (P-Asserted-Identity) by a trusted proxy
    #: (``SipSettings.trusted_proxies``); None for every other call. The From number of a
    #: call is the caller's claim only and never proves anything (docs/security.md).
    asserted_identity: str | None = None
    #: The INVITE came from a trusted proxy: media may go to the SDP's host (rtpengine) and
    #: in-dialog requests to the Contact/Record-Route; otherwise only to ``peer``'s host.
    trusted_source: bool = False
    _hangup: Callable[[Call], None] | None = field(default=None, repr=False)
    _timers: list[asyncio.TimerHandle | asyncio.Task[None]] = field(
        default_factory=list, repr=False
    )

    @property
    def caller(self) -> str:
        """The caller's URI (From)."""
        return header_uri(self.from_header)

    @property
    def callee(self) -> str:
        """The dialled URI (To), e.g. to pick a game by number."""
        return header_uri(self.to_header)

    def set_source(self, source: AudioSource | None) -> None:
        """Where the caller's audio comes from (called every 20 ms); None sends silence."""
        self.media.set_source(source)

    def hangup(self) -> None:
        """End the call from our side (sends BYE)."""
        if self._hangup is not None and self.state is not CallState.ENDED:
            self._hangup(self)
