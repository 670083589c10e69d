"""SIP message codec (RFC 3261 §7, §20): parse and serialise requests and responses.

Anything arriving on the SIP port is untrusted, so :func:`parse_message` raises only
:class:`SipParseError`; the server logs and drops such datagrams without touching other calls.
Header names are stored in one canonical spelling (compact forms expanded) and list headers
such as Via and Record-Route are split into one entry per value, so the user agent can walk
them without re-parsing commas. Content-Length is derived from the body, never stored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

SIP_VERSION: Final = "SIP/2.0"

#: RFC 3261 §7.3.3 and later RFCs' single-letter header names.
COMPACT_FORMS: Final = {
    "a": "Accept-Contact",
    "b": "Referred-By",
    "c": "Content-Type",
    "d": "Request-Disposition",
    "e": "Content-Encoding",
    "f": "From",
    "i": "Call-ID",
    "j": "Reject-Contact",
    "k": "Supported",
    "l": "Content-Length",
    "m": "Contact",
    "o": "Event",
    "r": "Refer-To",
    "s": "Subject",
    "t": "To",
    "u": "Allow-Events",
    "v": "Via",
    "x": "Session-Expires",
    "y": "Identity",
}
_KNOWN: Final = (
    "Accept",
    "Accept-Encoding",
    "Accept-Language",
    "Alert-Info",
    "Allow",
    "Authorization",
    "Call-ID",
    "Call-Info",
    "Contact",
    "Content-Disposition",
    "Content-Encoding",
    "Content-Language",
    "Content-Length",
    "Content-Type",
    "CSeq",
    "Date",
    "Event",
    "Expires",
    "From",
    "Max-Forwards",
    "Min-Expires",
    "MIME-Version",
    "Organization",
    "P-Asserted-Identity",
    "Priority",
    "Proxy-Authenticate",
    "Proxy-Authorization",
    "Proxy-Require",
    "Reason",
    "Record-Route",
    "Require",
    "Retry-After",
    "Route",
    "Server",
    "Session-Expires",
    "Subject",
    "Supported",
    "Timestamp",
    "To",
    "Unsupported",
    "User-Agent",
    "Via",
    "Warning",
    "WWW-Authenticate",
    *COMPACT_FORMS.values(),
)
_CANONICAL: Final = {name.lower(): name for name in _KNOWN} | dict(COMPACT_FORMS)
#: Headers whose comma-separated values are split into separate entries.
LIST_HEADERS: Final = frozenset({"Via", "Route", "Record-Route", "Contact"})

_TOKEN: Final = re.compile(r"[A-Za-z0-9\-.!%*_+`'~]+")
_LINE_SPLIT: Final = re.compile(r"\r?\n")
_FORBIDDEN: Final = re.compile(r"[\x00\r]")

REASONS: Final = {
    100: "Trying",
    180: "Ringing",
    183: "Session Progress",
    200: "OK",
    400: "Bad Request",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    408: "Request Timeout",
    415: "Unsupported Media Type",
    420: "Bad Extension",
    480: "Temporarily Unavailable",
    481: "Call/Transaction Does Not Exist",
    486: "Busy Here",
    487: "Request Terminated",
    488: "Not Acceptable Here",
    491: "Request Pending",
    500: "Server Internal Error",
    501: "Not Implemented",
    503: "Service Unavailable",
    505: "Version Not Supported",
}


class SipParseError(ValueError):
    """A datagram or header value that is not valid SIP."""


def canonical_name(name: str) -> str:
    """The stored spelling of a header name: compact forms expanded, known names normalised."""
    return _CANONICAL.get(name.lower(), name)


Headers = tuple[tuple[str, str], ...]


def _normalise_headers(headers: Headers) -> Headers:
    return tuple(
        (canonical_name(name), value)
        for name, value in headers
        if canonical_name(name) != "Content-Length"
    )


@dataclass(frozen=True, slots=True)
class _Message:
    headers: Headers = ()
    body: bytes = b""

    def get(self, name: str) -> str | None:
        """The first value of a header, or None."""
        wanted = canonical_name(name)
        return next((v for n, v in self.headers if n == wanted), None)

    def get_all(self, name: str) -> list[str]:
        """Every value of a header in order (one per list element for list headers)."""
        wanted = canonical_name(name)
        return [v for n, v in self.headers if n == wanted]

    def require(self, name: str) -> str:
        """The first value of a header the message cannot be handled without."""
        value = self.get(name)
        if value is None:
            raise SipParseError(f"missing {canonical_name(name)} header")
        return value

    def _serialise(self, start_line: str) -> bytes:
        lines = [start_line]
        lines.extend(f"{name}: {value}" for name, value in self.headers)
        lines.append(f"Content-Length: {len(self.body)}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8") + self.body


@dataclass(frozen=True, slots=True)
class SipRequest(_Message):
    """A SIP request. Header names are canonicalised on construction."""

    method: str = "OPTIONS"
    uri: str = "sip:invalid"

    def __post_init__(self) -> None:
        object.__setattr__(self, "headers", _normalise_headers(self.headers))

    def serialise(self) -> bytes:
        """Wire format with a Content-Length computed from the body."""
        return self._serialise(f"{self.method} {self.uri} {SIP_VERSION}")


@dataclass(frozen=True, slots=True)
class SipResponse(_Message):
    """A SIP response. Header names are canonicalised on construction."""

    status: int = 200
    reason: str = field(default="OK")

    def __post_init__(self) -> None:
        object.__setattr__(self, "headers", _normalise_headers(self.headers))

    def serialise(self) -> bytes:
        """Wire format with a Content-Length computed from the body."""
        return self._serialise(f"{SIP_VERSION} {self.status} {self.reason}")


SipMessage = SipRequest | SipResponse


def split_list_value(value: str) -> list[str]:
    """Split a header value on commas that are outside quotes and angle brackets."""
    parts: list[str] = []
    current: list[str] = []
    quoted = escaped = False
    depth = 0
    for ch in value:
        if escaped:
            escaped = False
        elif quoted and ch == "\\":
            escaped = True
        elif ch == '"':
            quoted = not quoted
        elif not quoted and ch == "<":
            depth += 1
        elif not quoted and ch == ">":
            depth = max(0, depth - 1)
        elif ch == "," and not quoted and depth == 0:
            parts.append("".join(current).strip(" \t"))
            current = []
            continue
        current.append(ch)
    parts.append("".join(current).strip(" \t"))
    return [p for p in parts if p]


def _split_head(data: bytes) -> tuple[bytes, bytes]:
    candidates = [(i, len(sep)) for sep in (b"\r\n\r\n", b"\n\n") if (i := data.find(sep)) >= 0]
    if not candidates:
        # A datagram without a blank line is allowed when it has no body.
        return data, b""
    index, length = min(candidates)
    return data[:index], data[index + length :]


def _header_lines(lines: list[str]) -> list[tuple[str, str]]:
    headers: list[tuple[str, str]] = []
    for line in lines:
        if not line:
            continue
        if line[0] in " \t":
            if not headers:
                raise SipParseError("continuation line before any header")
            name, value = headers[-1]
            folded = line.strip(" \t")
            headers[-1] = (name, f"{value} {folded}".strip(" \t"))
            continue
        name, colon, value = line.partition(":")
        name = name.rstrip(" \t")
        if not colon or not _TOKEN.fullmatch(name):
            raise SipParseError(f"bad header line: {line[:60]!r}")
        headers.append((canonical_name(name), value.strip(" \t")))
    return headers


def _expand_lists(headers: list[tuple[str, str]]) -> tuple[Headers, int | None]:
    out: list[tuple[str, str]] = []
    length: int | None = None
    for name, value in headers:
        if name == "Content-Length":
            if not value.isdigit() or not value.isascii():
                raise SipParseError(f"bad Content-Length: {value[:20]!r}")
            if length is not None and length != int(value):
                raise SipParseError("conflicting Content-Length headers")
            length = int(value)
        elif name in LIST_HEADERS and value != "*":
            out.extend((name, part) for part in split_list_value(value))
        else:
            out.append((name, value))
    return tuple(out), length


def _start_line(line: str, headers: Headers, body: bytes) -> SipMessage:
    if line.startswith("SIP/"):
        parts = line.split(" ", 2)
        if len(parts) < 2 or parts[0] != SIP_VERSION:
            raise SipParseError(f"bad status line: {line[:60]!r}")
        code = parts[1]
        if len(code) != 3 or not code.isascii() or not code.isdigit() or code[0] not in "123456":
            raise SipParseError(f"bad status code: {code!r}")
        return SipResponse(headers, body, int(code), parts[2] if len(parts) == 3 else "")
    parts = line.split(" ")
    if len(parts) != 3 or not _TOKEN.fullmatch(parts[0]) or not parts[1]:
        raise SipParseError(f"bad request line: {line[:60]!r}")
    if parts[2] != SIP_VERSION:
        raise SipParseError(f"unsupported version: {parts[2][:20]!r}")
    return SipRequest(headers, body, parts[0], parts[1])


def parse_message(data: bytes) -> SipMessage:
    """Parse one SIP message from a datagram; raises only SipParseError."""
    head_bytes, body = _split_head(data.lstrip(b"\r\n"))
    if not head_bytes:
        raise SipParseError("empty message")
    try:
        head = head_bytes.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SipParseError("header section is not UTF-8") from exc
    if _FORBIDDEN.search(head.replace("\r\n", "\n")):
        raise SipParseError("control characters in header section")
    lines = _LINE_SPLIT.split(head)
    headers, length = _expand_lists(_header_lines(lines[1:]))
    if length is not None:
        if length > len(body):
            raise SipParseError(f"body shorter than Content-Length {length}")
        body = body[:length]
    return _start_line(lines[0], headers, body)


def parse_cseq(value: str) -> tuple[int, str]:
    """The number and method of a CSeq header value."""
    parts = value.split()
    if len(parts) != 2 or not parts[0].isdigit() or not parts[0].isascii():
        raise SipParseError(f"bad CSeq: {value[:40]!r}")
    number = int(parts[0])
    if number >= 2**31:
        raise SipParseError("CSeq number out of range")
    return number, parts[1]


_PARAM: Final = re.compile(r";\s*([^;=\s]+)\s*(?:=\s*(\"[^\"]*\"|[^;\s]*))?")


def header_params(value: str) -> dict[str, str]:
    """The ``;name=value`` parameters of a header value outside its ``<...>`` URI (lower-case
    names), e.g. the ``tag`` of From/To or the ``branch`` of Via."""
    tail = value.rsplit(">", 1)[1] if ">" in value else value
    return {m.group(1).lower(): (m.group(2) or "").strip('"') for m in _PARAM.finditer(tail)}


def header_uri(value: str) -> str:
    """The URI of a name-addr (``"Name" <sip:x@y>;tag=1``) or addr-spec header value."""
    if "<" in value:
        start = value.index("<") + 1
        end = value.find(">", start)
        if end < 0:
            raise SipParseError(f"unterminated <URI>: {value[:60]!r}")
        return value[start:end]
    return value.split(";", 1)[0].strip()


def response_for(
    request: SipRequest,
    status: int,
    *,
    reason: str | None = None,
    to_tag: str | None = None,
    extra: Headers = (),
    body: bytes = b"",
) -> SipResponse:
    """A response to ``request`` per RFC 3261 §8.2.6: Via, From, Call-ID and CSeq copied,
    a To tag added when given and absent, and Record-Route copied for dialog-forming replies."""
    headers: list[tuple[str, str]] = [("Via", v) for v in request.get_all("Via")]
    for name in ("From", "To", "Call-ID", "CSeq"):
        value = request.get(name)
        if value is None:
            continue
        if name == "To" and to_tag and "tag" not in header_params(value) and status > 100:
            value = f"{value};tag={to_tag}"
        headers.append((name, value))
    if 100 < status < 300:
        headers.extend(("Record-Route", v) for v in request.get_all("Record-Route"))
    headers.extend(extra)
    return SipResponse(
        tuple(headers), body, status, reason if reason is not None else REASONS.get(status, "")
    )
