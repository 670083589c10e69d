"""The WebSocket protocol, version 1 (documented in docs/protocol.md).

Client messages are typed msgspec structs, decoded strictly: anything malformed becomes a
`ProtocolError` with a code, answered to that client only. Integers are bounded to what the
store's columns hold (an `after` beyond them once reached PostgreSQL and failed there) and
strings carry no NUL; the command inside `command` is checked field by field in `codec`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

PROTOCOL_VERSION = 1
MAX_MESSAGE_BYTES = 4096
#: A browser's SDP offer may be larger than any other message (still under the WebSocket's
#: frame limit of 8 KiB that `vollmond serve` gives uvicorn).
MAX_OFFER_BYTES = 8000
MAX_CID_LENGTH = 40
# A client's id for a command: short, printable, chosen by the client (docs/protocol.md).
ClientId = Annotated[
    str, msgspec.Meta(min_length=1, max_length=MAX_CID_LENGTH, pattern="^[A-Za-z0-9_-]+$")
]

INT_BOUND = 2**31 - 1

BoundedInt = Annotated[int, msgspec.Meta(ge=-INT_BOUND, le=INT_BOUND)]
Seq = Annotated[int, msgspec.Meta(ge=0, le=INT_BOUND)]
Ident = Annotated[str, msgspec.Meta(max_length=256, pattern=r"^[^\x00]*$")]


class Hello(msgspec.Struct, tag="hello", forbid_unknown_fields=True):
    game: Ident
    v: BoundedInt = PROTOCOL_VERSION
    token: Ident | None = None
    spectate: bool = False
    # Take the signed-in account's seat (session cookie) instead of a seat token (issue 12).
    account: bool = False
    # A moderator holding an alarm of this game listens in from the console (issue 9, O1):
    # the operator view and the spectators' voice mix; needs the signed-in staff account.
    operator: bool = False
    lang: Literal["de", "en"] = "de"
    after: Seq = 0
    # The client takes `batch` frames: what is queued for it at once goes out as one frame.
    batch: bool = False


class CommandMessage(msgspec.Struct, tag="command", forbid_unknown_fields=True):
    command: dict[str, Any]
    id: BoundedInt | None = None
    # Retried under the same cid, a command is answered with its first outcome, never applied
    # twice (also after a reconnect or a server restart).
    cid: ClientId | None = None


class Sync(msgspec.Struct, tag="sync", forbid_unknown_fields=True):
    pass


class Ping(msgspec.Struct, tag="ping", forbid_unknown_fields=True):
    pass


SdpText = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_OFFER_BYTES)]


class VoiceOffer(msgspec.Struct, tag="voice_offer", forbid_unknown_fields=True):
    """Open (or renew) this socket's voice: the browser's SDP offer (docs/protocol.md)."""

    sdp: SdpText


class VoiceIce(msgspec.Struct, tag="voice_ice", forbid_unknown_fields=True):
    """One trickled ICE candidate of the browser; an empty candidate ends them."""

    candidate: Annotated[str, msgspec.Meta(max_length=512, pattern=r"^[^\x00]*$")]
    sdpMid: Annotated[str, msgspec.Meta(max_length=32)] | None = None  # noqa: N815 - WebRTC's name
    sdpMLineIndex: Annotated[int, msgspec.Meta(ge=0, le=64)] | None = None  # noqa: N815


class VoiceStop(msgspec.Struct, tag="voice_stop", forbid_unknown_fields=True):
    """Hang up this socket's voice."""


ClientMessage = Hello | CommandMessage | Sync | Ping | VoiceOffer | VoiceIce | VoiceStop

_decoder: msgspec.json.Decoder[ClientMessage] = msgspec.json.Decoder(ClientMessage)


class ProtocolError(ValueError):
    """A client message we cannot accept; `code` goes back to the client."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def decode_client(raw: str | bytes) -> ClientMessage:
    data = raw.encode() if isinstance(raw, str) else raw
    too_large = ProtocolError("too_large", f"messages are limited to {MAX_MESSAGE_BYTES} bytes")
    if len(data) > MAX_OFFER_BYTES + 100:
        raise too_large
    try:
        message = _decoder.decode(data)
    except msgspec.ValidationError as exc:
        if len(data) > MAX_MESSAGE_BYTES:
            raise too_large from exc
        raise ProtocolError("invalid_message", str(exc)) from exc
    except msgspec.DecodeError as exc:
        if len(data) > MAX_MESSAGE_BYTES:
            raise too_large from exc
        raise ProtocolError("malformed_json", str(exc)) from exc
    if len(data) > MAX_MESSAGE_BYTES and not isinstance(message, VoiceOffer):
        raise too_large  # only an SDP offer may be longer than the other messages
    return message


def encode(message: dict[str, Any]) -> str:
    return msgspec.json.encode(message).decode()
