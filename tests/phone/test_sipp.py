"""The UAS against SIPp (Debian package sip-tester), a real SIP implementation, on 127.0.0.1.

Each scenario file under sipp/ asserts the server's responses itself (unexpected messages or
failed regular-expression checks make SIPp exit non-zero); these tests additionally check what
the application handler saw.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.needs import need
from tests.phone.helpers import RecordingHandler
from vollmond.phone.sip.uas import EndReason, SipUas, UasConfig

SCENARIOS = Path(__file__).parent / "sipp"


@pytest.fixture(autouse=True)
def _programs() -> None:
    need("sipp")


def free_udp_port() -> int:
    """A currently free UDP port on 127.0.0.1 (the OS picks; a race is unlikely in tests)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


async def run_sipp(scenario: str, server_port: int, workdir: Path) -> tuple[int, str]:
    """Run one SIPp call; returns the exit code and SIPp's error log (if any)."""
    proc = await asyncio.create_subprocess_exec(
        "sipp",
        f"127.0.0.1:{server_port}",
        "-sf",
        str(SCENARIOS / scenario),
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
        "1",
        "-l",
        "1",
        "-timeout",
        "20",
        "-timeout_error",
        "-nostdin",
        "-trace_err",
        cwd=workdir,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, stderr = await asyncio.wait_for(proc.communicate(), 30)
    errors = "".join(p.read_text(errors="replace") for p in workdir.glob("*_errors.log"))
    assert proc.returncode is not None
    return proc.returncode, errors + stderr.decode(errors="replace")


@pytest.fixture
async def server() -> AsyncIterator[tuple[SipUas, RecordingHandler]]:
    handler = RecordingHandler()
    uas = await SipUas.start(
        UasConfig(host="127.0.0.1", port=0, ring_time=0.3, rtp_timeout=30.0), handler
    )
    yield uas, handler
    await uas.close(bye_timeout=0.2)


async def test_sipp_call_with_info_dtmf(
    server: tuple[SipUas, RecordingHandler], tmp_path: Path
) -> None:
    uas, handler = server
    code, log = await run_sipp("uac_info_dtmf.xml", uas.port, tmp_path)
    assert code == 0, log
    assert handler.digits == ["4", "2", "#", "*"]
    assert len(handler.started) == 1
    assert handler.started[0].callee.startswith("sip:1234@")
    assert [reason for _, reason in handler.ended] == [EndReason.REMOTE_BYE]
    assert uas.calls == []


async def test_sipp_cancel_while_ringing(
    server: tuple[SipUas, RecordingHandler], tmp_path: Path
) -> None:
    uas, handler = server
    code, log = await run_sipp("uac_cancel.xml", uas.port, tmp_path)
    assert code == 0, log
    assert handler.started == []
    assert handler.ended == []
    assert uas.calls == []


async def test_sipp_options_ping(server: tuple[SipUas, RecordingHandler], tmp_path: Path) -> None:
    uas, _ = server
    code, log = await run_sipp("options.xml", uas.port, tmp_path)
    assert code == 0, log


async def test_sipp_unsupported_methods(
    server: tuple[SipUas, RecordingHandler], tmp_path: Path
) -> None:
    uas, _ = server
    code, log = await run_sipp("uac_unsupported.xml", uas.port, tmp_path)
    assert code == 0, log


async def test_sipp_calls_survive_malformed_datagrams(
    server: tuple[SipUas, RecordingHandler], tmp_path: Path
) -> None:
    """Junk sent to the SIP port while SIPp runs a full call does not disturb the call."""
    uas, handler = server
    loop = asyncio.get_running_loop()
    transport, _ = await loop.create_datagram_endpoint(
        asyncio.DatagramProtocol, local_addr=("127.0.0.1", 0)
    )
    junk = [b"\xff" * 50, b"INVITE\r\n\r\n", b"SIP/2.0 200 OK\r\n\r\n", b"BYE x SIP/2.0\r\n\r\n"]

    async def spray() -> None:
        for _ in range(20):
            for data in junk:
                transport.sendto(data, ("127.0.0.1", uas.port))
            await asyncio.sleep(0.02)

    try:
        result, _ = await asyncio.gather(run_sipp("uac_info_dtmf.xml", uas.port, tmp_path), spray())
        assert result[0] == 0, result[1]
    finally:
        transport.close()
    assert uas.dropped == 80
    assert handler.digits == ["4", "2", "#", "*"]
