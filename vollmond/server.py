"""The program assembled (DESIGN §7): the web service with the telephone plugged in.

The service (`vollmond.service`) does not import the telephone, and the telephone reaches the
games only through the hub it is given; this module is the one place that knows both, so
`vollmond serve` and the tests that run the whole program build it here. It imports the
telephone only where it starts it: a service without a SIP port (`--sip-port 0`) never loads
the telephone's modules (docs/decisions.md, "Start-up").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.applications import Starlette

from vollmond.service.config import Settings
from vollmond.service.enforce import Enforcer
from vollmond.service.hub import Hub
from vollmond.service.web.app import Channels, create_app
from vollmond.voice.rooms import VoiceRooms

if TYPE_CHECKING:
    from vollmond.phone.service import PhoneService


async def _start_telephone(
    hub: Hub, settings: Settings, enforcer: Enforcer, rooms: VoiceRooms
) -> PhoneService | None:
    """The telephone with the service's enforcer, so a banned caller is refused (O5), and the
    voice rooms the browser's peers share, so callers and browsers hear each other."""
    if not settings.sip_port:
        return None  # no telephone (what start_phone answers too), without importing it
    # The SIP server, the calls' sessions and their prompts (0.07 s of CPU) only in the
    # processes that answer calls (start-up cost, issue 16).
    from vollmond.phone.service import start_phone  # noqa: PLC0415

    return await start_phone(hub, settings, enforcer=enforcer, rooms=rooms)


async def _stop_telephone(phone: PhoneService | None) -> None:
    if phone is None:
        return
    from vollmond.phone.service import stop_phone  # noqa: PLC0415 - imported when it started

    await stop_phone(phone)


TELEPHONE = Channels(start=_start_telephone, stop=_stop_telephone)
"""The SIP channel: started after the hub resumed its games (none when `sip_port` is 0)."""


def build_app(settings: Settings) -> Starlette:
    """The whole program for `settings`: web, WebSocket, game actors and the telephone."""
    return create_app(settings, channels=TELEPHONE)
