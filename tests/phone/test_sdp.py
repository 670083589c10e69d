"""SDP offer parsing, codec choice and the answer."""

from __future__ import annotations

import pytest

from vollmond.phone.g711 import ALAW, ULAW
from vollmond.phone.sdp import (
    NoCommonCodecError,
    SdpError,
    SdpParseError,
    build_answer,
    build_offer,
    negotiate,
    parse_sdp,
)

OFFER = (
    "v=0\r\n"
    "o=alice 2890844526 2890844526 IN IP4 10.0.0.5\r\n"
    "s=-\r\n"
    "c=IN IP4 192.0.2.10\r\n"
    "t=0 0\r\n"
    "m=audio 49170 RTP/AVP 9 8 0 96 101\r\n"
    "a=rtpmap:9 G722/8000\r\n"
    "a=rtpmap:8 PCMA/8000\r\n"
    "a=rtpmap:96 telephone-event/16000\r\n"
    "a=rtpmap:101 telephone-event/8000\r\n"
    "a=fmtp:101 0-16\r\n"
    "a=ptime:20\r\n"
    "m=video 51372 RTP/AVP 31\r\n"
)


def test_parse_offer() -> None:
    sdp = parse_sdp(OFFER.encode())
    assert sdp.origin_address == "10.0.0.5"
    assert sdp.connection == "192.0.2.10"
    audio, video = sdp.media
    assert (audio.media, audio.port, audio.proto) == ("audio", 49170, "RTP/AVP")
    assert audio.formats == ("9", "8", "0", "96", "101")
    assert audio.fmtp == {101: "0-16"}
    assert audio.ptime == 20
    assert audio.encoding_of(0) is not None  # static PCMU without rtpmap
    assert audio.encoding_of(97) is None
    assert video.media == "video"


def test_negotiate_uses_callers_preference_and_numbers() -> None:
    chosen = negotiate(parse_sdp(OFFER))
    assert chosen.codec is ALAW
    assert chosen.audio_pt == 8
    assert chosen.dtmf_pt == 101  # the 16 kHz telephone-event is skipped
    assert (chosen.remote_address, chosen.remote_port) == ("192.0.2.10", 49170)
    assert chosen.media_index == 0
    assert not chosen.on_hold


def test_answer_mirrors_offer_lines() -> None:
    offer = parse_sdp(OFFER)
    answer = build_answer(
        offer,
        negotiate(offer),
        local_address="127.0.0.1",
        local_port=40000,
        session_id=7,
        version=1,
    ).decode()
    assert answer.endswith("\r\n")
    lines = answer.split("\r\n")
    assert "o=vollmond 7 1 IN IP4 127.0.0.1" in lines
    assert "c=IN IP4 127.0.0.1" in lines
    assert "m=audio 40000 RTP/AVP 8 101" in lines
    assert "a=rtpmap:8 PCMA/8000" in lines
    assert "a=rtpmap:101 telephone-event/8000" in lines
    assert "a=fmtp:101 0-15" in lines
    assert "a=sendrecv" in lines
    assert "m=video 0 RTP/AVP 31" in lines
    # The answer is itself valid SDP that negotiates to the same thing.
    again = negotiate(parse_sdp(answer))
    assert (again.codec, again.audio_pt, again.dtmf_pt) == (ALAW, 8, 101)


def test_static_pcmu_without_rtpmap_and_no_dtmf() -> None:
    sdp = "v=0\no=- 1 1 IN IP4 h\ns=-\nt=0 0\nm=audio 4000 RTP/AVP 0\nc=IN IP4 127.0.0.1\n"
    chosen = negotiate(parse_sdp(sdp))
    assert chosen.codec is ULAW
    assert chosen.dtmf_pt is None
    assert chosen.remote_address == "127.0.0.1"  # media-level c= line


@pytest.mark.parametrize(
    ("direction", "answered"),
    [("sendonly", "recvonly"), ("recvonly", "sendonly"), ("inactive", "inactive")],
)
def test_hold_directions_are_mirrored(direction: str, answered: str) -> None:
    offer = parse_sdp(OFFER.replace("a=ptime:20", f"a={direction}"))
    chosen = negotiate(offer)
    assert chosen.direction == direction
    assert chosen.on_hold is (direction != "recvonly")
    body = build_answer(
        offer, chosen, local_address="127.0.0.1", local_port=1, session_id=1, version=2
    )
    assert f"a={answered}" in body.decode()


def test_no_common_codec() -> None:
    g729 = OFFER.replace("9 8 0 96 101", "18 101").replace("a=rtpmap:8 PCMA/8000\r\n", "")
    with pytest.raises(NoCommonCodecError):
        negotiate(parse_sdp(g729))
    srtp = OFFER.replace("RTP/AVP 9 8", "RTP/SAVP 9 8")
    with pytest.raises(NoCommonCodecError):
        negotiate(parse_sdp(srtp))
    rejected = OFFER.replace("m=audio 49170", "m=audio 0")
    with pytest.raises(SdpError):
        negotiate(parse_sdp(rejected))


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"\xff\xfe",
        b"v=0\r\nhello\r\n",
        b"v=1\r\n",
        b"v=0\r\no=x\r\nm=audio 1 RTP/AVP 0\r\n",
        b"v=0\r\no=- 1 1 IN IP4 h\r\n",
        b"v=0\r\no=- 1 1 IN IP4 h\r\nm=audio x RTP/AVP 0\r\n",
        b"v=0\r\no=- 1 1 IN IP4 h\r\nm=audio 99999 RTP/AVP 0\r\n",
        b"v=0\r\no=- 1 1 IN IP4 h\r\nc=IN X 1\r\nm=audio 1 RTP/AVP 0\r\n",
        b"v=0\r\no=- 1 1 IN IP4 h\r\nm=audio 1 RTP/AVP 0\r\na=rtpmap:x PCMU/8000\r\n",
        b"v=0\r\no=- 1 1 IN IP4 h\r\nm=audio 1 RTP/AVP 0\r\na=rtpmap:0 PCMU\r\n",
    ],
)
def test_malformed_sdp(body: bytes) -> None:
    with pytest.raises(SdpParseError):
        parse_sdp(body)


def test_missing_connection_address() -> None:
    with pytest.raises(SdpParseError, match="connection"):
        negotiate(parse_sdp("v=0\r\no=- 1 1 IN IP4 h\r\nm=audio 1 RTP/AVP 0\r\n"))


def test_offer_for_late_offer_calls_negotiates_with_an_answer() -> None:
    offer = build_offer(local_address="127.0.0.1", local_port=4000, session_id=1, version=1)
    parsed = parse_sdp(offer)
    assert parsed.media[0].formats == ("0", "8", "101")
    answer = OFFER.replace("9 8 0 96 101", "8 101").encode()
    chosen = negotiate(parse_sdp(answer))
    assert (chosen.codec, chosen.dtmf_pt) == (ALAW, 101)
    assert negotiate(parsed).codec is ULAW
