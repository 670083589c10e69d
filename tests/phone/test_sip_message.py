"""SIP message codec, including fuzzing with hypothesis."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from vollmond.phone.sip.message import (
    LIST_HEADERS,
    SipParseError,
    SipRequest,
    SipResponse,
    canonical_name,
    header_params,
    header_uri,
    parse_cseq,
    parse_message,
    response_for,
    split_list_value,
)

INVITE = (
    "INVITE sip:bob@biloxi.example.com SIP/2.0\r\n"
    "Via: SIP/2.0/UDP pc33.atlanta.example.com;branch=z9hG4bKnashds8, "
    "SIP/2.0/UDP proxy.example.com;branch=z9hG4bK1\r\n"
    "v: SIP/2.0/UDP third.example.com;branch=z9hG4bK2\r\n"
    "Max-Forwards: 70\r\n"
    "To: Bob <sip:bob@biloxi.example.com>\r\n"
    'f: "Alice, the caller" <sip:alice@atlanta.example.com>;tag=1928301774\r\n'
    "i: a84b4c76e66710\r\n"
    "CSeq: 314159 INVITE\r\n"
    "Record-Route: <sip:p1.example.com;lr>, <sip:p2.example.com;lr>\r\n"
    "m: <sip:alice@pc33.atlanta.example.com>\r\n"
    "Subject: a long\r\n"
    "  folded\r\n"
    "\tsubject\r\n"
    "c: application/sdp\r\n"
    "l: 4\r\n"
    "\r\n"
    "v=0\r\nextra bytes beyond Content-Length"
)


def test_parse_request_with_compact_and_list_headers() -> None:
    msg = parse_message(INVITE.encode())
    assert isinstance(msg, SipRequest)
    assert (msg.method, msg.uri) == ("INVITE", "sip:bob@biloxi.example.com")
    assert msg.get_all("via") == [
        "SIP/2.0/UDP pc33.atlanta.example.com;branch=z9hG4bKnashds8",
        "SIP/2.0/UDP proxy.example.com;branch=z9hG4bK1",
        "SIP/2.0/UDP third.example.com;branch=z9hG4bK2",
    ]
    assert msg.get("Call-ID") == "a84b4c76e66710"
    assert msg.get("From") == '"Alice, the caller" <sip:alice@atlanta.example.com>;tag=1928301774'
    assert msg.get_all("Record-Route") == ["<sip:p1.example.com;lr>", "<sip:p2.example.com;lr>"]
    assert msg.get("Subject") == "a long folded subject"
    assert msg.get("Content-Type") == "application/sdp"
    assert msg.get("Content-Length") is None  # derived from the body
    assert msg.body == b"v=0\r"
    assert msg.require("cseq") == "314159 INVITE"
    with pytest.raises(SipParseError, match="missing Require"):
        msg.require("Require")


def test_parse_response_with_bare_lf_and_no_content_length() -> None:
    raw = b"SIP/2.0 180 Ringing\nVia: SIP/2.0/UDP h;branch=z9hG4bK1\nt: <sip:a@b>;tag=9\n\nbody"
    msg = parse_message(raw)
    assert isinstance(msg, SipResponse)
    assert (msg.status, msg.reason) == (180, "Ringing")
    assert msg.get("To") == "<sip:a@b>;tag=9"
    assert msg.body == b"body"


def test_serialise_canonical_form() -> None:
    msg = SipResponse((("v", "SIP/2.0/UDP h"), ("l", "99"), ("call-id", "x")), b"abc", 200, "OK")
    assert msg.headers == (("Via", "SIP/2.0/UDP h"), ("Call-ID", "x"))
    assert msg.serialise() == (
        b"SIP/2.0 200 OK\r\nVia: SIP/2.0/UDP h\r\nCall-ID: x\r\nContent-Length: 3\r\n\r\nabc"
    )


def test_keepalive_and_leading_blank_lines() -> None:
    with pytest.raises(SipParseError, match="empty"):
        parse_message(b"\r\n\r\n")
    msg = parse_message(b"\r\nOPTIONS sip:x SIP/2.0\r\nCall-ID: 1\r\n\r\n")
    assert isinstance(msg, SipRequest)


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"\xff\xfe INVITE",
        b"INVITE sip:x SIP/3.0\r\n\r\n",
        b"INVITE sip:x\r\n\r\n",
        b"INVITE  sip:x SIP/2.0\r\n\r\n",
        b"INV(TE sip:x SIP/2.0\r\n\r\n",
        b"SIP/2.0 99 Low\r\n\r\n",
        b"SIP/2.0 700 High\r\n\r\n",
        b"SIP/2.0 2\xd9\xa0\xd9\xa0 Arabic digits\r\n\r\n",
        b"SIP/1.0 200 OK\r\n\r\n",
        b"OPTIONS sip:x SIP/2.0\r\n folded first\r\n\r\n",
        b"OPTIONS sip:x SIP/2.0\r\nNo colon here\r\n\r\n",
        b"OPTIONS sip:x SIP/2.0\r\nBad Name: x\r\n\r\n",
        b"OPTIONS sip:x SIP/2.0\r\nX: a\x00b\r\n\r\n",
        b"OPTIONS sip:x SIP/2.0\r\nX: a\rb\r\n\r\n",
        b"OPTIONS sip:x SIP/2.0\r\nContent-Length: -1\r\n\r\n",
        b"OPTIONS sip:x SIP/2.0\r\nContent-Length: 10\r\n\r\nshort",
        b"OPTIONS sip:x SIP/2.0\r\nl: 1\r\nContent-Length: 2\r\n\r\nab",
    ],
)
def test_malformed_messages(raw: bytes) -> None:
    with pytest.raises(SipParseError):
        parse_message(raw)


def test_header_helpers() -> None:
    assert split_list_value('"a, b" <sip:x,y@h>;p=1 , <sip:z>,,') == [
        '"a, b" <sip:x,y@h>;p=1',
        "<sip:z>",
    ]
    assert split_list_value('"q\\"," <sip:a>, <sip:b>') == ['"q\\"," <sip:a>', "<sip:b>"]
    params = header_params('"A;tag=no" <sip:a@b;transport=udp>;tag=abc ; lr;x="q"')
    assert params == {"tag": "abc", "lr": "", "x": "q"}
    assert header_params("SIP/2.0/UDP h:5060;Branch=z9hG4bK7;rport")["branch"] == "z9hG4bK7"
    assert header_uri('"A" <sip:a@b;lr>;tag=1') == "sip:a@b;lr"
    assert header_uri("sip:a@b;tag=1") == "sip:a@b"
    with pytest.raises(SipParseError):
        header_uri("<sip:a@b")
    assert parse_cseq("42  INVITE") == (42, "INVITE")
    for bad in ("x INVITE", "1", "99999999999 BYE", "\u0661 BYE"):
        with pytest.raises(SipParseError):
            parse_cseq(bad)


def test_response_for_copies_dialog_headers() -> None:
    req = parse_message(INVITE.encode())
    assert isinstance(req, SipRequest)
    ringing = response_for(req, 180, to_tag="srv1", extra=(("Contact", "<sip:srv@h>"),))
    assert ringing.reason == "Ringing"
    assert len(ringing.get_all("Via")) == 3
    assert ringing.get("To") == "Bob <sip:bob@biloxi.example.com>;tag=srv1"
    assert ringing.get_all("Record-Route") == req.get_all("Record-Route")
    assert ringing.get("Contact") == "<sip:srv@h>"
    trying = response_for(req, 100, to_tag="srv1")
    assert trying.get("To") == "Bob <sip:bob@biloxi.example.com>"
    assert trying.get_all("Record-Route") == []
    assert response_for(req, 487, to_tag="srv1").get_all("Record-Route") == []


# --- property tests --------------------------------------------------------------------------

_TOKEN = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.!%*_+`'~",
    min_size=1,
    max_size=12,
)
_TEXT = st.text(
    alphabet=st.characters(codec="utf-8", exclude_characters="\r\n\x00"),
    max_size=30,
).map(lambda s: s.strip(" \t"))
_NAMES = (
    st.sampled_from(
        ["Via", "v", "To", "From", "Call-ID", "CSeq", "Record-Route", "Route", "Contact", "m"]
    )
    | _TOKEN
)


@st.composite
def _header(draw: st.DrawFn) -> tuple[str, str]:
    name = draw(_NAMES)
    value = draw(_TEXT)
    if canonical_name(name) in LIST_HEADERS:
        value = value.replace(",", ";").replace('"', "'").replace("<", "(").replace(">", ")")
        value = value or "x"
    return name, value


_HEADERS = st.lists(_header(), max_size=8).map(tuple)
_REQUESTS = st.builds(
    SipRequest,
    headers=_HEADERS,
    body=st.binary(max_size=40),
    method=_TOKEN,
    uri=st.text(
        alphabet=st.characters(codec="utf-8", exclude_characters=" \r\n\x00"),
        min_size=1,
        max_size=20,
    ),
)
_RESPONSES = st.builds(
    SipResponse,
    headers=_HEADERS,
    body=st.binary(max_size=40),
    status=st.integers(100, 699),
    reason=_TEXT,
)


@given(_REQUESTS | _RESPONSES)
@settings(max_examples=300)
def test_parse_serialise_roundtrip(msg: SipRequest | SipResponse) -> None:
    assert parse_message(msg.serialise()) == msg


@given(st.binary(max_size=300))
@settings(max_examples=500)
@example(b"SIP/2.0 200")
@example(b"A B SIP/2.0\nl: 99999999999999999999\n\n")
@example(b"A B SIP/2.0\n\n")
def test_parser_only_raises_sip_parse_error(raw: bytes) -> None:
    try:
        msg = parse_message(raw)
    except SipParseError:
        return
    # Whatever parses must serialise and parse again to the same message.
    assert parse_message(msg.serialise()) == msg


@given(
    _REQUESTS | _RESPONSES,
    st.lists(st.tuples(st.integers(0, 400), st.integers(0, 255)), min_size=1, max_size=6),
)
@settings(max_examples=300)
def test_mutated_messages_only_raise_sip_parse_error(
    msg: SipRequest | SipResponse, flips: list[tuple[int, int]]
) -> None:
    raw = bytearray(msg.serialise())
    for pos, byte in flips:
        raw[pos % len(raw)] = byte
    try:
        parsed = parse_message(bytes(raw))
    except SipParseError:
        return
    assert parse_message(parsed.serialise()) == parsed
