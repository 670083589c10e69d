"""SDP offer/answer (RFC 3264/4566) for a G.711 + telephone-event audio call.

The answer reuses the caller's payload type numbers: telephone-event has no static number and
many phones only recognise their own choice, so the UAS never invents one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from vollmond.phone.g711 import G711Codec, codec_by_name

_STATIC_PT: Final = {0: ("PCMU", 8000), 8: ("PCMA", 8000)}
_SUPPORTED_PROTOS: Final = ("RTP/AVP", "RTP/AVPF")
_DIRECTIONS: Final = ("sendrecv", "sendonly", "recvonly", "inactive")
_ANSWER_DIRECTION: Final = {
    "sendrecv": "sendrecv",
    "sendonly": "recvonly",
    "recvonly": "sendonly",
    "inactive": "inactive",
}


class SdpError(ValueError):
    """Base class for SDP problems; the UAS answers them with 488 Not Acceptable Here."""


class SdpParseError(SdpError):
    """The body is not SDP we can read."""


class NoCommonCodecError(SdpError):
    """The offer has no usable audio stream with PCMU or PCMA."""


@dataclass(frozen=True, slots=True)
class RtpMap:
    """An ``a=rtpmap`` entry (or the static assignment of RFC 3551)."""

    encoding: str
    clock_rate: int


@dataclass(frozen=True, slots=True)
class MediaDescription:
    """One ``m=`` section of an offer."""

    media: str
    port: int
    proto: str
    formats: tuple[str, ...]
    connection: str | None
    rtpmap: dict[int, RtpMap] = field(default_factory=dict)
    fmtp: dict[int, str] = field(default_factory=dict)
    direction: str = "sendrecv"
    ptime: int | None = None

    def encoding_of(self, pt: int) -> RtpMap | None:
        """The encoding for a payload type, falling back to the static table."""
        if pt in self.rtpmap:
            return self.rtpmap[pt]
        static = _STATIC_PT.get(pt)
        return RtpMap(*static) if static else None


@dataclass(frozen=True, slots=True)
class SessionDescription:
    """The parts of an SDP body the UAS needs."""

    origin_address: str
    connection: str | None
    media: tuple[MediaDescription, ...]


@dataclass(frozen=True, slots=True)
class Negotiated:
    """The outcome of negotiation: where to send, and with which payload types."""

    media_index: int
    remote_address: str
    remote_port: int
    codec: G711Codec
    audio_pt: int
    dtmf_pt: int | None
    direction: str

    @property
    def on_hold(self) -> bool:
        """Whether the caller asked us not to send (hold or a 0.0.0.0 address)."""
        return self.direction in ("sendonly", "inactive") or self.remote_address == "0.0.0.0"


def _parse_int(value: str, what: str) -> int:
    try:
        return int(value)
    except ValueError as exc:
        raise SdpParseError(f"bad {what}: {value!r}") from exc


def _connection_address(value: str) -> str:
    parts = value.split()
    if len(parts) != 3 or parts[0] != "IN" or parts[1] not in ("IP4", "IP6"):
        raise SdpParseError(f"bad c= line: {value!r}")
    return parts[2].split("/", 1)[0]


def _media_line(value: str) -> tuple[str, int, str, tuple[str, ...]]:
    parts = value.split()
    if len(parts) < 4:
        raise SdpParseError(f"bad m= line: {value!r}")
    port = _parse_int(parts[1].split("/", 1)[0], "media port")
    if not 0 <= port <= 65535:
        raise SdpParseError(f"media port out of range: {port}")
    return parts[0], port, parts[2], tuple(parts[3:])


def _rtpmap(value: str) -> tuple[int, RtpMap]:
    pt_text, _, spec = value.partition(" ")
    parts = spec.strip().split("/")
    if len(parts) < 2:
        raise SdpParseError(f"bad rtpmap: {value!r}")
    return _parse_int(pt_text, "payload type"), RtpMap(parts[0], _parse_int(parts[1], "clock rate"))


class _MediaBuilder:
    """Accumulates the attribute lines of one m= section while parsing."""

    def __init__(self, media: str, port: int, proto: str, formats: tuple[str, ...]) -> None:
        self.media, self.port, self.proto, self.formats = media, port, proto, formats
        self.connection: str | None = None
        self.rtpmap: dict[int, RtpMap] = {}
        self.fmtp: dict[int, str] = {}
        self.direction: str | None = None
        self.ptime: int | None = None

    def attribute(self, value: str) -> None:
        name, _, rest = value.partition(":")
        if name == "rtpmap":
            pt, rtpmap = _rtpmap(rest)
            self.rtpmap[pt] = rtpmap
        elif name == "fmtp":
            pt_text, _, params = rest.partition(" ")
            self.fmtp[_parse_int(pt_text, "payload type")] = params.strip()
        elif name == "ptime":
            self.ptime = _parse_int(rest.strip(), "ptime")
        elif name in _DIRECTIONS:
            self.direction = name

    def build(self, session_direction: str) -> MediaDescription:
        return MediaDescription(
            media=self.media,
            port=self.port,
            proto=self.proto,
            formats=self.formats,
            connection=self.connection,
            rtpmap=self.rtpmap,
            fmtp=self.fmtp,
            direction=self.direction or session_direction,
            ptime=self.ptime,
        )


def parse_sdp(body: bytes | str) -> SessionDescription:
    """Parse an SDP body; unknown lines are ignored, broken ones raise SdpParseError."""
    if isinstance(body, bytes):
        try:
            body = body.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SdpParseError("SDP is not UTF-8") from exc
    origin: str | None = None
    connection: str | None = None
    session_direction = "sendrecv"
    builders: list[_MediaBuilder] = []
    for raw in body.splitlines():
        line = raw.strip()
        if not line:
            continue
        kind, eq, value = line.partition("=")
        if not eq or len(kind) != 1:
            raise SdpParseError(f"not an SDP line: {line!r}")
        current = builders[-1] if builders else None
        if kind == "v" and value != "0":
            raise SdpParseError(f"unsupported SDP version {value!r}")
        if kind == "o":
            parts = value.split()
            if len(parts) != 6:
                raise SdpParseError(f"bad o= line: {value!r}")
            origin = parts[5]
        elif kind == "c":
            address = _connection_address(value)
            if current is None:
                connection = address
            else:
                current.connection = address
        elif kind == "m":
            builders.append(_MediaBuilder(*_media_line(value)))
        elif kind == "a":
            if current is not None:
                current.attribute(value)
            elif value in _DIRECTIONS:
                session_direction = value
    if origin is None:
        raise SdpParseError("SDP has no o= line")
    if not builders:
        raise SdpParseError("SDP has no m= line")
    return SessionDescription(
        origin_address=origin,
        connection=connection,
        media=tuple(b.build(session_direction) for b in builders),
    )


def negotiate(offer: SessionDescription) -> Negotiated:
    """Choose the first audio stream with PCMU or PCMA, in the caller's order of preference.

    telephone-event/8000 is taken when offered, with the caller's payload type number.
    """
    for index, m in enumerate(offer.media):
        if m.media != "audio" or m.port == 0 or m.proto not in _SUPPORTED_PROTOS:
            continue
        address = m.connection or offer.connection
        if address is None:
            raise SdpParseError("audio stream has no connection address")
        audio: tuple[int, G711Codec] | None = None
        dtmf_pt: int | None = None
        for fmt in m.formats:
            if not fmt.isdigit():
                continue
            pt = int(fmt)
            enc = m.encoding_of(pt)
            if enc is None or enc.clock_rate != 8000:
                continue
            name = enc.encoding.upper()
            if audio is None and name in ("PCMU", "PCMA"):
                audio = (pt, codec_by_name(name))
            elif dtmf_pt is None and name == "TELEPHONE-EVENT":
                dtmf_pt = pt
        if audio is not None:
            return Negotiated(
                media_index=index,
                remote_address=address,
                remote_port=m.port,
                codec=audio[1],
                audio_pt=audio[0],
                dtmf_pt=dtmf_pt,
                direction=m.direction,
            )
    raise NoCommonCodecError("no audio stream offers PCMU or PCMA at 8000 Hz")


def build_answer(
    offer: SessionDescription,
    chosen: Negotiated,
    *,
    local_address: str,
    local_port: int,
    session_id: int,
    version: int,
) -> bytes:
    """The SDP answer: one m= line per offered line (RFC 3264 §6), unused ones with port 0."""
    lines = [
        "v=0",
        f"o=vollmond {session_id} {version} IN IP4 {local_address}",
        "s=vollmond",
        f"c=IN IP4 {local_address}",
        "t=0 0",
    ]
    for index, m in enumerate(offer.media):
        if index != chosen.media_index:
            lines.append(f"m={m.media} 0 {m.proto} {m.formats[0]}")
            continue
        pts = [chosen.audio_pt] + ([chosen.dtmf_pt] if chosen.dtmf_pt is not None else [])
        lines.append(f"m=audio {local_port} {m.proto} {' '.join(map(str, pts))}")
        lines.append(f"a=rtpmap:{chosen.audio_pt} {chosen.codec.name}/8000")
        if chosen.dtmf_pt is not None:
            lines.append(f"a=rtpmap:{chosen.dtmf_pt} telephone-event/8000")
            lines.append(f"a=fmtp:{chosen.dtmf_pt} 0-15")
        lines.append("a=ptime:20")
        lines.append(f"a={_ANSWER_DIRECTION[chosen.direction]}")
    return ("\r\n".join(lines) + "\r\n").encode("ascii")


#: Payload types we use when we make the offer (late offer: INVITE or re-INVITE without SDP).
OFFER_DTMF_PT: Final = 101


def build_offer(*, local_address: str, local_port: int, session_id: int, version: int) -> bytes:
    """Our own offer, for an INVITE that came without SDP: PCMU, PCMA and telephone-event."""
    lines = [
        "v=0",
        f"o=vollmond {session_id} {version} IN IP4 {local_address}",
        "s=vollmond",
        f"c=IN IP4 {local_address}",
        "t=0 0",
        f"m=audio {local_port} RTP/AVP 0 8 {OFFER_DTMF_PT}",
        "a=rtpmap:0 PCMU/8000",
        "a=rtpmap:8 PCMA/8000",
        f"a=rtpmap:{OFFER_DTMF_PT} telephone-event/8000",
        f"a=fmtp:{OFFER_DTMF_PT} 0-15",
        "a=ptime:20",
        "a=sendrecv",
    ]
    return ("\r\n".join(lines) + "\r\n").encode("ascii")
