"""The UAS against baresip (Debian), a real softphone, dialling in over 127.0.0.1.

baresip plays a 600 Hz tone from a WAV file, sends RFC 4733 DTMF when told to over its TCP
control socket, records what it hears (sndfile module) and hangs up. The test checks both
directions of audio, the digits and the BYE.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.needs import need
from tests.phone.e2e.support import Phone, read_wav
from tests.phone.helpers import RecordingHandler, ToneSource, dominant_frequency
from vollmond.phone.sip.uas import EndReason, SipUas, UasConfig


@pytest.fixture(autouse=True)
def _programs() -> None:
    need("baresip")


async def test_baresip_dials_in_sends_rfc4733_and_hears_us(tmp_path: Path) -> None:
    # The e2e tests' launcher: fresh ports, tried again when baresip exits at once because a
    # port it was given was taken meanwhile (this test's own start did not, and failed so on a
    # loaded machine).
    handler = RecordingHandler(source=ToneSource(1000.0))
    uas = await SipUas.start(UasConfig(host="127.0.0.1", port=0, ring_time=0.2), handler)
    n = np.arange(10 * 8000)
    sent = (0.3 * 32767 * np.sin(2 * np.pi * 600.0 * n / 8000)).astype(np.int16)
    phone = await Phone.launch(tmp_path, "tester", sent)
    try:
        await phone.dial(uas.port)
        await handler.wait_for(lambda: handler.started, timeout=10)
        call = handler.started[0]
        assert call.negotiated.dtmf_pt is not None  # baresip offers telephone-event
        # Its keys travel in its RTP stream: wait until that stream reaches us (on a loaded
        # machine a fixed pause was sometimes shorter than the media's set-up).
        await handler.wait_for(lambda: bool(handler.frames), timeout=10)
        await phone.keys("1#7", gap=0.4)
        await handler.wait_for(lambda: len(handler.digits) == 3, timeout=5)
        assert handler.digits == ["1", "#", "7"]
        # Two seconds of audio, counted in samples rather than wall time: on a loaded machine
        # baresip's first frames come late.
        await handler.wait_for(lambda: sum(len(f) for f in handler.frames) >= 8000 * 2, timeout=10)
        await phone.hangup()
        await handler.wait_for(lambda: handler.ended, timeout=5)
        assert handler.ended[0][1] is EndReason.REMOTE_BYE
    finally:
        await phone.stop()
        await uas.close(bye_timeout=0.1)

    # We heard baresip's 600 Hz file (one second of it, after the first frames).
    heard = np.concatenate(handler.frames)
    assert len(heard) >= 8000 * 2
    assert dominant_frequency(heard[1600:9600]) == pytest.approx(600, abs=2)
    # baresip heard our 1 kHz tone, recorded by its sndfile filter.
    decoded = list((phone.home / "snd").glob("*-dec.wav"))
    assert len(decoded) == 1, (phone.home / "baresip.log").read_text(errors="replace")
    received = read_wav(decoded[0])
    assert len(received) >= 8000
    assert dominant_frequency(received[1600:9600]) == pytest.approx(1000, abs=2)
    assert np.sqrt(np.mean(received[1600:9600].astype(np.float64) ** 2)) > 3000
