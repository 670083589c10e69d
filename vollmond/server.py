"""The program assembled (DESIGN §7): the web service with the telephone plugged in.

The service (`vollmond.service`) does not import the telephone, and the telephone reaches the
games only through the hub it is given; this module is the one place that knows both, so
`vollmond serve` and the tests that run the whole program build it here.
"""

from __future__ import annotations

from typing import Any

from starlette.applications import Starlette

from vollmond.phone.service import start_phone, stop_phone
from vollmond.service.config import Settings
from vollmond.service.enforce import Enforcer
from vollmond.service.hub import Hub
from vollmond.service.web.app import Channels, create_app
from vollmond.voice.rooms import VoiceRooms


async def _start_telephone(
    hub: Hub, settings: Settings, enforcer: Enforcer, rooms: VoiceRooms
) -> Any:
    """The telephone with the service's enforcer, so a banned caller is refused (O5), and the
    voice rooms the browser's peers share, so callers and browsers hear each other."""
    return await start_phone(hub, settings, enforcer=enforcer, rooms=rooms)


TELEPHONE = Channels(start=_start_telephone, stop=stop_phone)
"""The SIP channel: started after the hub resumed its games (none when `sip_port` is 0)."""


def build_app(settings: Settings) -> Starlette:
    """The whole program for `settings`: web, WebSocket, game actors and the telephone."""
    return create_app(settings, channels=TELEPHONE)
