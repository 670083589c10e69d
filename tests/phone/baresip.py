"""baresip, the real softphone of the telephone tests: its configuration without a sound card
and its TCP control socket (netstring-framed JSON). The e2e tests' `Phone` (tests/phone/e2e/
support.py) launches it with these."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from pathlib import Path

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
