"""Real telephones for the end-to-end tests: baresip softphones driven over ctrl_tcp, SIPp.

A :class:`Phone` is one baresip process with its own home directory: it dials the server,
plays a WAV file into the call (a tone, silence or in-band key tones), records what it hears
(the sndfile module writes ``*-dec.wav``) and sends RFC 4733 keys when told to.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import wave
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from tests.phone.baresip import Control, free_tcp_port, write_config_file
from tests.phone.test_sipp import free_udp_port
from vollmond.phone.g711 import ULAW
from vollmond.phone.media import Int16Array
from vollmond.phone.service import PhoneService

RATE = 8000
#: Seconds of audio in a phone's source file (baresip plays it once).
SOURCE_SECONDS = 120


def tone(freq: float, seconds: float, amplitude: float = 6000.0) -> Int16Array:
    n = np.arange(int(seconds * RATE))
    samples: Int16Array = (amplitude * np.sin(2 * np.pi * freq * n / RATE)).astype(np.int16)
    return samples


DTMF_FREQS = {
    "1": (697, 1209), "2": (697, 1336), "3": (697, 1477), "A": (697, 1633),
    "4": (770, 1209), "5": (770, 1336), "6": (770, 1477), "B": (770, 1633),
    "7": (852, 1209), "8": (852, 1336), "9": (852, 1477), "C": (852, 1633),
    "*": (941, 1209), "0": (941, 1336), "#": (941, 1477), "D": (941, 1633),
}  # fmt: skip


def dtmf_tones(keys: str, *, lead: float = 0.5, on: float = 0.12, off: float = 0.12) -> Int16Array:
    """In-band key tones (ITU-T Q.23 pairs), each ``on`` seconds with ``off`` pauses."""
    parts = [np.zeros(int(lead * RATE), dtype=np.int16)]
    for key in keys:
        low, high = DTMF_FREQS[key]
        parts.append(
            (tone(low, on, 7000.0).astype(np.int32) + tone(high, on, 7000.0)).astype(np.int16)
        )
        parts.append(np.zeros(int(off * RATE), dtype=np.int16))
    return np.concatenate(parts)


def write_wav(path: Path, samples: Int16Array) -> None:
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(samples.astype("<i2").tobytes())


def read_wav(path: Path) -> Int16Array:
    with wave.open(str(path)) as w:
        assert (w.getframerate(), w.getnchannels(), w.getsampwidth()) == (RATE, 1, 2)
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.int16)


def level_at(samples: npt.NDArray[np.int16], freq: float) -> float:
    """The amplitude of one frequency in a stretch of 8 kHz audio (window-corrected DFT bin)."""
    if len(samples) == 0:
        return 0.0
    x = samples.astype(np.float64)
    n = np.arange(len(x))
    window = np.hanning(len(x))
    bin_ = np.sum(x * window * np.exp(-2j * np.pi * freq * n / RATE))
    return float(2 * abs(bin_) / np.sum(window))


def rms(samples: npt.NDArray[np.int16]) -> float:
    return float(np.sqrt(np.mean(samples.astype(np.float64) ** 2))) if len(samples) else 0.0


def stretch(recording: Int16Array, ended: float, start: float, stop: float) -> Int16Array:
    """The part of a recording heard between two moments (time.time), placed from its end
    (`ended`: when the phone hung up; baresip records every frame the server sent, 20 ms
    each, so the last sample is the latest)."""
    began = ended - len(recording) / RATE
    a = max(0, int((start - began) * RATE))
    b = max(a, int((stop - began) * RATE))
    return recording[a:b]


def tone_levels(samples: Int16Array, freq: float) -> list[float]:
    """The tone's level in each half second, less the level 40 Hz beside it on either side:
    a pure tone stands out of its neighbours, speech (the narration) lies across them."""
    step = RATE // 2
    out = []
    for i in range(0, len(samples) - step + 1, step):
        window = samples[i : i + step]
        beside = max(level_at(window, freq - 40.0), level_at(window, freq + 40.0))
        out.append(max(0.0, level_at(window, freq) - beside))
    return out


LAUNCH_ATTEMPTS = 3


@dataclass
class Phone:
    """One baresip softphone with its own account name (the SIP From user)."""

    name: str
    home: Path
    process: asyncio.subprocess.Process
    control: Control

    @classmethod
    async def launch(cls, root: Path, name: str, source: Int16Array | None = None) -> Phone:
        home = root / name
        home.mkdir(parents=True)
        audio = source if source is not None else np.zeros(RATE, dtype=np.int16)
        if len(audio) < SOURCE_SECONDS * RATE:
            audio = np.concatenate([audio, np.zeros(SOURCE_SECONDS * RATE - len(audio), np.int16)])
        write_wav(home / "in.wav", audio)
        (home / "snd").mkdir()
        (home / "accounts").write_text(f"<sip:{name}@127.0.0.1>;regint=0\n")
        (home / "contacts").write_text("")
        for _ in range(LAUNCH_ATTEMPTS):
            launched = await cls._try_launch(home)
            if launched is not None:
                process, control = launched
                return cls(name, home, process, control)
        raise RuntimeError(f"baresip did not start: {(home / 'baresip.log').read_text()}")

    @staticmethod
    async def _try_launch(home: Path) -> tuple[asyncio.subprocess.Process, Control] | None:
        """Start baresip on fresh ports; None when it exits at once (a port was taken)."""
        sip_port = free_udp_port()
        ctrl_port = free_tcp_port({sip_port, sip_port + 1})
        write_config_file(home, sip_port, ctrl_port)
        log = (home / "baresip.log").open("wb")
        process = await asyncio.create_subprocess_exec(
            "baresip",
            "-f",
            str(home),
            cwd=home,  # the recordings' folder is relative to it (write_config_file)
            stdin=asyncio.subprocess.DEVNULL,
            stdout=log,
            stderr=asyncio.subprocess.STDOUT,
        )
        log.close()
        deadline = asyncio.get_running_loop().time() + 10
        while process.returncode is None and asyncio.get_running_loop().time() < deadline:
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", ctrl_port)
            except OSError:
                await asyncio.sleep(0.1)
                continue
            return process, Control(writer)
        if process.returncode is None:
            process.kill()
        await process.wait()
        return None

    async def dial(self, server_port: int, number: str = "1234", host: str = "127.0.0.1") -> None:
        """Call `number` at `host:server_port` (a Vollmond node, or a proxy in front of them)."""
        await self.control.send("dial", f"sip:{number}@{host}:{server_port}")

    async def keys(self, keys: str, gap: float = 0.25) -> None:
        """RFC 4733 key presses, one after the other."""
        for key in keys:
            await self.control.send("sndcode", key)
            await asyncio.sleep(gap)

    async def hangup(self) -> None:
        await self.control.send("hangup")

    async def stop(self) -> None:
        if self.process.returncode is not None:
            return
        with contextlib.suppress(OSError, ConnectionError):
            await self.control.send("quit")
        self.control.close()
        try:
            await asyncio.wait_for(self.process.wait(), 5)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()

    async def final_recording(self) -> Int16Array:
        """Quit baresip, then read what it heard: its sndfile module finishes a file's header
        only when the call's audio stream is torn down, which a fixed pause after the hang-up
        did not always outlast on a loaded machine."""
        await self.stop()
        return self.recording()

    def recording(self) -> Int16Array:
        """Everything this phone heard (the decoded side of its sndfile recording)."""
        files = sorted((self.home / "snd").glob("*-dec.wav"))
        assert files, (self.home / "baresip.log").read_text(errors="replace")
        return np.concatenate([read_wav(f) for f in files])

    def log_text(self) -> str:
        return (self.home / "baresip.log").read_text(errors="replace")


async def stop_all(launched: Iterable[Phone]) -> None:
    """Quit every phone, so each recording file is complete before it is read."""
    for phone in launched:
        await phone.stop()


@contextlib.asynccontextmanager
async def phones(
    root: Path, sources: dict[str, Int16Array | None]
) -> AsyncIterator[dict[str, Phone]]:
    """Launch one baresip per name; stop them all afterwards."""
    launched: dict[str, Phone] = {}
    try:
        for name, source in sources.items():
            launched[name] = await Phone.launch(root, name, source)
        yield launched
    finally:
        for phone in launched.values():
            await phone.stop()


def media_from(service: PhoneService, name: str) -> bool:
    """The server has received the first RTP packet of `name`'s call (its address is latched):
    baresip's media runs, so its keys (RFC 4733, in the same stream) reach the server from now
    on. A key sent before that is lost on a loaded machine, where setting up the call's media
    can take longer than any fixed pause."""
    return any(
        call.media.latched is not None for call in service.lines if f":{name}@" in call.caller
    )


async def wait_until(predicate: Callable[[], bool], timeout: float = 10.0, what: str = "") -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.02)
    del what


# --- SIPp ------------------------------------------------------------------------------------


def write_rtp_pcap(path: Path, samples: Int16Array, *, dst_port: int = 6000) -> None:
    """A pcap of PCMU RTP packets (20 ms each) carrying ``samples``, for SIPp's
    ``play_pcap_audio`` (it rewrites the addresses and keeps the timing)."""
    encoded = ULAW.encode(samples[: len(samples) // 160 * 160])
    payloads = [encoded[i : i + 160] for i in range(0, len(encoded), 160)]
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)]
    for index, payload in enumerate(payloads):
        rtp = struct.pack("!BBHII", 0x80, 0, index & 0xFFFF, index * 160, 0x1234ABCD)
        rtp += payload
        udp = struct.pack("!HHHH", 4000, dst_port, 8 + len(rtp), 0) + rtp
        ip = struct.pack(
            "!BBHHHBBH4s4s",
            0x45,
            0,
            20 + len(udp),
            index & 0xFFFF,
            0,
            64,
            17,
            0,
            socket.inet_aton("127.0.0.1"),
            socket.inet_aton("127.0.0.1"),
        )
        frame = b"\x00" * 12 + b"\x08\x00" + ip + udp
        ts = index * 20_000
        out.append(struct.pack("<IIII", ts // 1_000_000, ts % 1_000_000, len(frame), len(frame)))
        out.append(frame)
    path.write_bytes(b"".join(out))


SIPP_PORT_ATTEMPTS = 3
_PORT_TAKEN = "errno = 98"  # SIPp's words for EADDRINUSE when it binds


async def run_sipp(
    scenario: Path,
    server_port: int,
    workdir: Path,
    *,
    calls: int = 1,
    rate: float | None = None,
    extra: Iterable[str] = (),
    timeout: float = 60.0,
) -> tuple[int, str]:
    """Run SIPp as a caller; returns its exit code and error log.

    Its SIP and media ports are found free here and bound by SIPp a moment later; a port
    another test's process took in between (a whole suite: "Unable to bind audio RTP socket
    ... errno = 98") ends SIPp before it calls, and it runs again on fresh ports."""
    for attempt in range(SIPP_PORT_ATTEMPTS):
        if attempt:  # the failed try's log is not this run's
            for old in workdir.glob("*_errors.log"):
                old.unlink()
        code, log = await _sipp_once(scenario, server_port, workdir, calls, rate, extra, timeout)
        if _PORT_TAKEN not in log:
            break
    return code, log


async def _sipp_once(
    scenario: Path,
    server_port: int,
    workdir: Path,
    calls: int,
    rate: float | None,
    extra: Iterable[str],
    timeout: float,
) -> tuple[int, str]:
    args = [
        "sipp",
        f"127.0.0.1:{server_port}",
        "-sf",
        str(scenario),
        "-i",
        "127.0.0.1",
        "-p",
        str(free_udp_port()),
        "-mi",
        "127.0.0.1",
        "-mp",
        str(free_udp_port()),
        "-s",
        "1234",
        "-m",
        str(calls),
        "-l",
        str(calls),
        "-timeout",
        str(int(timeout)),
        "-timeout_error",
        "-nostdin",
        "-trace_err",
        *(["-r", str(rate)] if rate is not None else []),
        *extra,
    ]
    proc = await asyncio.create_subprocess_exec(
        *args,
        cwd=workdir,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, stderr = await asyncio.wait_for(proc.communicate(), timeout + 30)
    errors = "".join(p.read_text(errors="replace") for p in workdir.glob("*_errors.log"))
    assert proc.returncode is not None
    return proc.returncode, errors + stderr.decode(errors="replace")


@dataclass
class KeyLog:
    """Keys a session received, with the time each arrived."""

    keys: list[str] = field(default_factory=list)
    times: list[float] = field(default_factory=list)

    def text(self) -> str:
        return "".join(self.keys)
