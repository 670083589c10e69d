"""The one path on which a caller number signs in without a PIN (docs/security.md, "Telephone
identity"): a call through a trusted proxy (here 127.0.0.2, another source address on the
loopback) that asserts the number with P-Asserted-Identity, for a number whose confirmation also
came through that proxy. Real SIP datagrams through the real server and the real session; the
same call from an untrusted address with the same headers gets only the pre-fill."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.phone.e2e.conftest import LiveRig, live_rig
from tests.phone.e2e.support import wait_until
from tests.phone.helpers import UdpPeer
from tests.phone.test_sip_attacks import Caller
from tests.service.support import ApiClient
from vollmond.phone.session import EspeakVoice
from vollmond.settings.sip import SipSettings

NUMBER = "+4930777"
PROXY = "127.0.0.2"
PAI = f"P-Asserted-Identity: <tel:{NUMBER}>\r\n"


@pytest.fixture
async def trusted(tmp_path: Path, voice: EspeakVoice) -> AsyncIterator[LiveRig]:
    async with live_rig(tmp_path, voice, SipSettings(trusted_proxies=(PROXY,))) as rig:
        yield rig


class ProxiedCall:
    """One call as the proxy forwards it: INVITE with the asserted number, keys as SIP INFO."""

    def __init__(self, peer: UdpPeer, server_port: int) -> None:
        self.caller = Caller(peer, server_port, user=NUMBER)
        self.cseq = 1

    async def answer(self) -> None:
        host = self.caller.peer.transport.get_extra_info("sockname")[0]  # type: ignore[union-attr]
        self.caller.invite(media=(host, 9), extra=PAI)
        assert (await self.caller.final()).status == 200
        self.caller.ack()

    async def keys(self, digits: str) -> None:
        for digit in digits:
            self.cseq += 1
            body = f"Signal={digit}\r\nDuration=160\r\n"
            head = self.caller.headers(
                "INFO", cseq=self.cseq, branch="z9hG4bK" + secrets.token_hex(6)
            )
            self.caller.peer.send(
                (
                    head + "Content-Type: application/dtmf-relay\r\n"
                    f"Content-Length: {len(body)}\r\n\r\n{body}"
                ).encode(),
                self.caller.server,
            )
            await asyncio.sleep(0.12)

    def bye(self) -> None:
        self.cseq += 1
        head = self.caller.headers("BYE", cseq=self.cseq, branch="z9hG4bK" + secrets.token_hex(6))
        self.caller.peer.send((head + "Content-Length: 0\r\n\r\n").encode(), self.caller.server)


async def settle(rig: LiveRig) -> None:
    session = rig.session(NUMBER)
    async with asyncio.timeout(20):
        await session.idle()
        await session.prompts.rendered()


async def call_in(rig: LiveRig, source: str, count: int) -> tuple[ProxiedCall, UdpPeer]:
    peer = await UdpPeer.open(source)
    call = ProxiedCall(peer, rig.sip_port)
    await call.answer()
    await wait_until(lambda: len(rig.sessions.get(NUMBER, [])) == count, 15)
    return call, peer


async def hang_up(rig: LiveRig, call: ProxiedCall, peer: UdpPeer) -> None:
    call.bye()
    await wait_until(lambda: not rig.phone.lines, 10)
    peer.close()


async def test_a_number_confirmed_through_the_proxy_signs_in_through_it(trusted: LiveRig) -> None:
    owner = ApiClient(trusted.service)
    try:
        await owner.signup("Henrike")
        asked = await owner.post("/api/phone", {"number": NUMBER, "pin": "7770"})
        assert asked.status_code == 200, asked.text
        code = str(asked.json()["pending"]["code"])
    finally:
        await owner.close()

    # The owner confirms through the proxy: key 4, then the code from the browser.
    call, peer = await call_in(trusted, PROXY, 1)
    confirming = trusted.session(NUMBER)
    assert confirming.caller.asserted_number == NUMBER
    await wait_until(lambda: confirming.t("phone.ident.choices") in confirming.spoken(), 15)
    await settle(trusted)
    await call.keys("4")
    await settle(trusted)
    await call.keys(code + "#")
    await wait_until(lambda: confirming.t("phone.ident.verify_ok") in confirming.spoken(), 15)
    assert confirming.account_id is None  # confirming proves the number, it does not sign in
    await hang_up(trusted, call, peer)

    # The same headers from an untrusted address: the number only pre-fills, the PIN is asked.
    call, peer = await call_in(trusted, "127.0.0.1", 2)
    stranger = trusted.session(NUMBER)
    assert stranger.caller.asserted_number is None
    await wait_until(lambda: stranger.t("phone.ident.prefilled") in stranger.spoken(), 15)
    assert stranger.account_id is None and stranger.identity_id is None
    await hang_up(trusted, call, peer)

    # Through the proxy again: signed in as the owner without a PIN.
    call, peer = await call_in(trusted, PROXY, 3)
    returning = trusted.session(NUMBER)
    await wait_until(lambda: returning.account_id == owner.account_id, 15)
    assert returning.identity_id is not None
    await hang_up(trusted, call, peer)
