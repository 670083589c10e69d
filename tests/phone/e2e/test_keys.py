"""Keys reach the caller's session by every path a real phone uses: RFC 4733 (baresip),
SIP INFO (SIPp) and in-band tones (SIPp playing RTP from a pcap, offering no telephone-event)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.phone.e2e.conftest import PhoneRig
from tests.phone.e2e.support import (
    dtmf_tones,
    phones,
    run_sipp,
    wait_until,
    write_rtp_pcap,
)

SCENARIOS = Path(__file__).parent / "sipp"
PHONE_SCENARIOS = Path(__file__).parents[1] / "sipp"


async def test_rfc4733_keys_from_baresip_reach_the_session(rig: PhoneRig) -> None:
    async with phones(rig.root / "phones", {"keyer": None}) as lines:
        await lines["keyer"].dial(rig.sip_port)
        await wait_until(lambda: "keyer" in rig.board.made, 10)
        session = rig.board.session("keyer")
        await wait_until(lambda: session.started, 5)
        await asyncio.sleep(0.5)
        await lines["keyer"].keys("*05#1", gap=0.3)
        await wait_until(lambda: session.keylog.text() == "*05#1", 5)
        await lines["keyer"].hangup()
        await wait_until(lambda: session.closed, 5)
    assert rig.phone.lines == {}


async def test_sip_info_keys_from_sipp_reach_the_session(rig: PhoneRig, tmp_path: Path) -> None:
    code, log = await run_sipp(PHONE_SCENARIOS / "uac_info_dtmf.xml", rig.sip_port, tmp_path)
    assert code == 0, log
    session = rig.board.session("sipp")
    assert session.keylog.text() == "42#*"
    await wait_until(lambda: session.closed, 5)


async def test_in_band_key_tones_reach_the_session(rig: PhoneRig, tmp_path: Path) -> None:
    write_rtp_pcap(tmp_path / "inband.pcap", dtmf_tones("*05#19", on=0.12, off=0.12))
    code, log = await run_sipp(SCENARIOS / "uac_inband.xml", rig.sip_port, tmp_path)
    assert code == 0, log
    session = rig.board.session("inband")
    assert session.keylog.text() == "*05#19"
    await wait_until(lambda: session.closed, 5)
