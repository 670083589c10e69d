"""`vollmond serve` with a telephone: the operator's `[sip]` limits reach the SIP server and
`/metrics` shows active calls, dropped datagrams by reason (RTP's too, counted in the media
process), the media clock (packets sent and refused, late ticks, the lead) and the process's
open fds."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import httpx

from tests.phone.helpers import UdpPeer
from tests.phone.test_sip_attacks import Caller, key
from tests.phone.test_sipp import free_udp_port
from tests.service.support import running_service
from vollmond.phone.sdp import negotiate, parse_sdp
from vollmond.service.config import Settings
from vollmond.settings.sip import SipSettings

FOREIGN = 'vollmond_sip_dropped_total{reason="foreign_rtp"}'
SENT = "vollmond_rtp_packets_sent_total"
LEAD = "vollmond_media_lead_seconds"


def sample(text: str, name: str) -> float:
    match = re.search(rf"^{re.escape(name)} (\S+)$", text, re.MULTILINE)
    assert match, f"{name} not in /metrics"
    return float(match.group(1))


async def test_metrics_show_calls_drops_and_fds(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path / "data",
        sip_port=free_udp_port(),
        sip=SipSettings(max_calls_per_source=1),
    )
    async with running_service("sqlite", settings) as service:
        url = f"http://127.0.0.1:{service.port}/metrics"
        async with httpx.AsyncClient() as http:
            before = (await http.get(url)).text
            assert sample(before, "vollmond_sip_calls_active") == 0
            assert sample(before, 'vollmond_sip_dropped_total{reason="foreign_rtp"}') == 0
            assert sample(before, "process_open_fds") > 0
            assert sample(before, SENT) == 0
            assert 0 <= sample(before, LEAD) <= 0.010  # 0 until a media process first reports

            sip = await UdpPeer.open()
            media = await UdpPeer.open()
            stranger = await UdpPeer.open("127.0.0.2")
            try:
                caller = Caller(sip, settings.sip_port)
                caller.invite(media=("127.0.0.1", media.port))
                ok = await caller.final()
                caller.ack()
                busy = Caller(sip, settings.sip_port)  # over the file's per-source cap of 1
                busy.invite()
                assert (await busy.final()).status == 486
                sip.send(b"INVITE\r\n\r\n", ("127.0.0.1", settings.sip_port))
                port = negotiate(parse_sdp(ok.body)).remote_port
                for n in range(3):
                    stranger.send(key(9, 1000 + 800 * n, n), ("127.0.0.1", port))
                # One more request after the junk: when it is answered, the junk was handled
                # (in process; a media process reports its drops twice a second, so wait).
                probe = Caller(sip, settings.sip_port)
                probe.invite()
                assert (await probe.final()).status == 486
                async with asyncio.timeout(5):
                    while sample(after := (await http.get(url)).text, FOREIGN) < 3:
                        await asyncio.sleep(0.1)
                # The call's first 10 packets (200 ms), as the media process next reports them.
                async with asyncio.timeout(10):
                    while sample(after, SENT) < 10:
                        await asyncio.sleep(0.1)
                        after = (await http.get(url)).text
            finally:
                for peer in (sip, media, stranger):
                    peer.close()
    assert sample(after, "vollmond_sip_calls_active") == 1
    dropped = 'vollmond_sip_dropped_total{reason="%s"}'
    assert sample(after, dropped % "source_busy") == 2
    assert sample(after, dropped % "malformed") == 1
    assert sample(after, dropped % "foreign_rtp") == 3
    # The call's greeting went out on the media clock, every packet taken by the kernel.
    assert sample(after, "vollmond_rtp_packets_unsent_total") == 0
    assert 0 < sample(after, LEAD) <= 0.010
    # Late and skipped ticks depend on the machine's load: only their presence is asserted.
    for name in ("vollmond_media_late_ticks_total", "vollmond_media_skipped_ticks_total"):
        assert re.search(rf"^{name} \d", after, re.MULTILINE), name
    assert sample(after, "process_open_fds") > 0
