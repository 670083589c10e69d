"""The UAS against baresip (Debian), a real softphone, dialling in over 127.0.0.1.

baresip plays a 600 Hz tone from a WAV file, sends RFC 4733 DTMF when told to over its TCP
control socket, records what it hears (sndfile module) and hangs up. The test checks both
directions of audio, the digits and the BYE.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import subprocess
import wave
from pathlib import Path

import numpy as np
import pytest

from tests.needs import need
from tests.phone.helpers import RecordingHandler, ToneSource, dominant_frequency
from tests.phone.test_sipp import free_udp_port
from vollmond.phone.sip.uas import EndReason, SipUas, UasConfig


@pytest.fixture(autouse=True)
def _programs() -> None:
    need("baresip", "sox")


MODULES = Path("/usr/lib/baresip/modules")


def free_tcp_port(avoid: set[int]) -> int:
    """A free TCP port on 127.0.0.1 not in ``avoid``."""
    while True:
        with contextlib.closing(socket.socket()) as s:
            s.bind(("127.0.0.1", 0))
            port: int = s.getsockname()[1]
        if port not in avoid:
            return port


def write_config_file(home: Path, sip_port: int, ctrl_port: int) -> None:
    """baresip without a sound card: the WAV file in, recording filter, audio to nowhere."""
    (home / "config").write_text(
        "\n".join(
            [
                "poll_method epoll",
                f"sip_listen 127.0.0.1:{sip_port}",
                "sip_transports udp",
                "net_interface 127.0.0.1",
                f"audio_source aufile,{home / 'in.wav'}",
                "audio_player aubridge,nowhere",
                "audio_alert aubridge,nowhere",
                "audio_srate 8000",
                "audio_channels 1",
                f"module_path {MODULES}",
                "module g711.so",
                "module aufile.so",
                "module aubridge.so",
                "module sndfile.so",
                "module_app account.so",
                "module_app menu.so",
                "module_app ctrl_tcp.so",
                f"ctrl_tcp_listen 127.0.0.1:{ctrl_port}",
                # Relative to the home baresip runs in: sndfile names its files in a 128-byte
                # buffer, so a long pytest path cut off the end of "…-dec.wav".
                "snd_path snd",
                "",
            ]
        )
    )


def write_config(home: Path, sip_port: int, ctrl_port: int) -> None:
    """A baresip home for one test phone: a 600 Hz tone to send, a folder for recordings."""
    wav = str(home / "in.wav")
    sox = ["sox", "-n", "-r", "8000", "-c", "1", "-b", "16", wav, "synth", "10", "sine", "600"]
    subprocess.run([*sox, "vol", "0.3"], check=True)
    (home / "snd").mkdir()
    write_config_file(home, sip_port, ctrl_port)
    (home / "accounts").write_text("<sip:tester@127.0.0.1>;regint=0\n")
    (home / "contacts").write_text("")


class Control:
    """baresip's ctrl_tcp: netstring-framed JSON commands."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    @classmethod
    async def connect(cls, port: int, timeout: float = 10.0) -> Control:
        async with asyncio.timeout(timeout):
            while True:
                try:
                    _, writer = await asyncio.open_connection("127.0.0.1", port)
                    return cls(writer)
                except OSError:
                    await asyncio.sleep(0.1)

    async def send(self, command: str, params: str = "") -> None:
        body = json.dumps({"command": command, "params": params, "token": command}).encode()
        self._writer.write(str(len(body)).encode() + b":" + body + b",")
        await self._writer.drain()

    def close(self) -> None:
        self._writer.close()


def read_wav(path: Path) -> np.ndarray[tuple[int], np.dtype[np.int16]]:
    with wave.open(str(path)) as w:
        assert (w.getframerate(), w.getnchannels(), w.getsampwidth()) == (8000, 1, 2)
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")


async def test_baresip_dials_in_sends_rfc4733_and_hears_us(tmp_path: Path) -> None:
    handler = RecordingHandler(source=ToneSource(1000.0))
    uas = await SipUas.start(UasConfig(host="127.0.0.1", port=0, ring_time=0.2), handler)
    sip_port = free_udp_port()
    ctrl_port = free_tcp_port({sip_port, sip_port + 1, uas.port, uas.port + 1})
    write_config(tmp_path, sip_port, ctrl_port)
    log = (tmp_path / "baresip.log").open("wb")
    proc = await asyncio.create_subprocess_exec(
        "baresip",
        "-f",
        str(tmp_path),
        cwd=tmp_path,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=log,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        ctrl = await Control.connect(ctrl_port)
        await ctrl.send("dial", f"sip:1234@127.0.0.1:{uas.port}")
        await handler.wait_for(lambda: handler.started, timeout=10)
        call = handler.started[0]
        assert call.negotiated.dtmf_pt is not None  # baresip offers telephone-event
        # Its keys travel in its RTP stream: wait until that stream reaches us (on a loaded
        # machine a fixed pause was sometimes shorter than the media's set-up).
        await handler.wait_for(lambda: bool(handler.frames), timeout=10)
        for digit in "1#7":
            await ctrl.send("sndcode", digit)
            await asyncio.sleep(0.4)
        await handler.wait_for(lambda: len(handler.digits) == 3, timeout=5)
        assert handler.digits == ["1", "#", "7"]
        # Two seconds of audio, counted in samples rather than wall time: on a loaded machine
        # baresip's first frames come late.
        await handler.wait_for(lambda: sum(len(f) for f in handler.frames) >= 8000 * 2, timeout=10)
        await ctrl.send("hangup")
        await handler.wait_for(lambda: handler.ended, timeout=5)
        assert handler.ended[0][1] is EndReason.REMOTE_BYE
        await ctrl.send("quit")
        ctrl.close()
        await asyncio.wait_for(proc.wait(), 10)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        log.close()
        await uas.close(bye_timeout=0.1)

    # We heard baresip's 600 Hz file (one second of it, after the first frames).
    heard = np.concatenate(handler.frames)
    assert len(heard) >= 8000 * 2
    assert dominant_frequency(heard[1600:9600]) == pytest.approx(600, abs=2)
    # baresip heard our 1 kHz tone, recorded by its sndfile filter.
    decoded = list((tmp_path / "snd").glob("*-dec.wav"))
    assert len(decoded) == 1, (tmp_path / "baresip.log").read_text(errors="replace")
    received = read_wav(decoded[0])
    assert len(received) >= 8000
    assert dominant_frequency(received[1600:9600]) == pytest.approx(1000, abs=2)
    assert np.sqrt(np.mean(received[1600:9600].astype(np.float64) ** 2)) > 3000
