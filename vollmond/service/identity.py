"""Phone identities for the telephone channel, as the hub hands them out.

The telephone does not open the store (tests/test_architecture.py): its sign-in asks this
service, which the hub builds on its own sessions. Each method is one store operation; the
PIN lockouts, rate limits and number verification stay in :mod:`vollmond.store.phone` and
:mod:`vollmond.store.phone_numbers`, where they are tested against both databases.
"""

from __future__ import annotations

from datetime import datetime

from vollmond.settings import IdentitySettings
from vollmond.store import Sessions
from vollmond.store.errors import InvalidPinError
from vollmond.store.phone import (
    PhoneIdentity,
    PinCheck,
    PinOutcome,
    check_pin,
    create_phone_identity,
    get_phone_identity,
    identify_asserted,
    identify_caller,
    set_expert,
)
from vollmond.store.phone_numbers import Verification, VerifyOutcome, verify_number
from vollmond.store.types import utcnow

__all__ = [
    "InvalidPinError",
    "PhoneIdentities",
    "PhoneIdentity",
    "PinCheck",
    "PinOutcome",
    "Verification",
    "VerifyOutcome",
]


class PhoneIdentities:
    """Sign-in by telephone: who is calling, PIN checks, new phone IDs, linking a number."""

    def __init__(self, sessions: Sessions) -> None:
        self.sessions = sessions

    async def asserted(self, number: str) -> PhoneIdentity | None:
        """The identity whose number a trusted proxy asserted (signed in without a PIN)."""
        return await identify_asserted(self.sessions, number)

    async def claimed(self, number: str) -> PhoneIdentity | None:
        """The identity a plain caller number claims (for pre-filling the phone ID only)."""
        return await identify_caller(self.sessions, number)

    async def check_pin(
        self, identity_id: int, pin: str, *, source: str, settings: IdentitySettings
    ) -> PinCheck:
        return await check_pin(self.sessions, identity_id, pin, source=source, settings=settings)

    async def create(self, pin: str, settings: IdentitySettings) -> PhoneIdentity:
        """A new phone ID with `pin`; `InvalidPinError` if the PIN is not allowed."""
        return await create_phone_identity(self.sessions, pin=pin, settings=settings)

    async def verify_number(
        self, number: str, code: str, *, asserted: bool, settings: IdentitySettings
    ) -> Verification:
        return await verify_number(
            self.sessions, number, code, asserted=asserted, settings=settings
        )

    async def expert(self, identity_id: int) -> bool:
        """Whether this identity chose expert mode (``*7#``) on an earlier call."""
        return (await get_phone_identity(self.sessions, identity_id)).expert

    async def set_expert(self, identity_id: int, on: bool) -> None:
        await set_expert(self.sessions, identity_id, on)

    @staticmethod
    def now() -> datetime:
        """The store's clock (lockouts are stored in it)."""
        return utcnow()
