"""G.711 tables against a scalar transcription of the ITU-T / Sun reference code."""

from __future__ import annotations

import numpy as np
import pytest

from vollmond.phone.g711 import ALAW, ULAW, G711Codec, codec_by_name

_SEG_UEND = (0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF, 0x1FFF)
_SEG_AEND = (0x1F, 0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF)


def _search(val: int, table: tuple[int, ...]) -> int:
    for i, end in enumerate(table):
        if val <= end:
            return i
    return len(table)


def ref_linear2ulaw(pcm_val: int) -> int:
    """Sun g711.c linear2ulaw, line by line."""
    pcm_val >>= 2
    if pcm_val < 0:
        pcm_val = -pcm_val
        mask = 0x7F
    else:
        mask = 0xFF
    pcm_val = min(pcm_val, 8159)
    pcm_val += 0x84 >> 2
    seg = _search(pcm_val, _SEG_UEND)
    if seg >= 8:
        return 0x7F ^ mask
    uval = (seg << 4) | ((pcm_val >> (seg + 1)) & 0xF)
    return (uval ^ mask) & 0xFF


def ref_ulaw2linear(u_val: int) -> int:
    """Sun g711.c ulaw2linear."""
    u_val = ~u_val & 0xFF
    t = ((u_val & 0x0F) << 3) + 0x84
    t <<= (u_val & 0x70) >> 4
    return (0x84 - t) if (u_val & 0x80) else (t - 0x84)


def ref_linear2alaw(pcm_val: int) -> int:
    """Sun g711.c linear2alaw."""
    pcm_val >>= 3
    if pcm_val >= 0:
        mask = 0xD5
    else:
        mask = 0x55
        pcm_val = -pcm_val - 1
    seg = _search(pcm_val, _SEG_AEND)
    if seg >= 8:
        return (0x7F ^ mask) & 0xFF
    aval = seg << 4
    if seg < 2:
        aval |= (pcm_val >> 1) & 0x0F
    else:
        aval |= (pcm_val >> seg) & 0x0F
    return (aval ^ mask) & 0xFF


def ref_alaw2linear(a_val: int) -> int:
    """Sun g711.c alaw2linear."""
    a_val ^= 0x55
    t = (a_val & 0x0F) << 4
    seg = (a_val & 0x70) >> 4
    if seg == 0:
        t += 8
    elif seg == 1:
        t += 0x108
    else:
        t += 0x108
        t <<= seg - 1
    return t if (a_val & 0x80) else -t


ALL_PCM = np.arange(-32768, 32768, dtype=np.int32)


def test_ulaw_encode_all_65536_inputs_bit_exact() -> None:
    expected = bytes(ref_linear2ulaw(int(v)) for v in ALL_PCM)
    assert ULAW.encode(ALL_PCM.astype(np.int16)) == expected


def test_alaw_encode_all_65536_inputs_bit_exact() -> None:
    expected = bytes(ref_linear2alaw(int(v)) for v in ALL_PCM)
    assert ALAW.encode(ALL_PCM.astype(np.int16)) == expected


def test_ulaw_decode_all_256_codes_bit_exact() -> None:
    got = ULAW.decode(bytes(range(256)))
    assert got.dtype == np.int16
    assert [int(v) for v in got] == [ref_ulaw2linear(c) for c in range(256)]


def test_alaw_decode_all_256_codes_bit_exact() -> None:
    got = ALAW.decode(bytes(range(256)))
    assert [int(v) for v in got] == [ref_alaw2linear(c) for c in range(256)]


@pytest.mark.parametrize("codec", [ULAW, ALAW])
def test_decode_then_encode_is_identity_on_codes(codec: G711Codec) -> None:
    codes = bytes(range(256))
    roundtrip = codec.encode(codec.decode(codes))
    # µ-law has two zero codes (0x7F and 0xFF) that decode to 0; 0 encodes to 0xFF.
    diff = [i for i in range(256) if roundtrip[i] != codes[i]]
    assert diff == ([0x7F] if codec is ULAW else [])


def test_silence_codes_decode_to_near_zero() -> None:
    assert int(ULAW.decode(bytes([ULAW.silence]))[0]) == 0
    assert abs(int(ALAW.decode(bytes([ALAW.silence]))[0])) == 8
    assert ULAW.encode(np.zeros(1, np.int16)) == bytes([ULAW.silence])
    assert ALAW.encode(np.zeros(1, np.int16)) == bytes([ALAW.silence])


def test_known_reference_points() -> None:
    # Values from the G.711 tables: full-scale positive and negative.
    assert ULAW.encode(np.array([32767, -32768], np.int16)) == bytes([0x80, 0x00])
    assert ALAW.encode(np.array([32767, -32768], np.int16)) == bytes([0xAA, 0x2A])


def test_tables_are_read_only_and_lookup_by_name() -> None:
    assert codec_by_name("pcmu") is ULAW
    assert codec_by_name("PCMA") is ALAW
    with pytest.raises(KeyError):
        codec_by_name("G729")
    with pytest.raises(ValueError, match="read-only"):
        ULAW.encode_table[0] = 1
