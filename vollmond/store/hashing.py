"""Secret hashing: argon2 for passwords and PINs, HMAC-SHA-256 for invitation and seat codes.

argon2 is deliberately slow (~0.1 s of CPU), so it runs in a worker thread: a login must not
stall every game actor on the event loop.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
from dataclasses import dataclass

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

# argon2id with the library's defaults (RFC 9106's second recommended option: 64 MiB, three
# passes). The test suite swaps in a cheap hasher through `use_hasher`: it signs up hundreds of
# accounts on two cores, where these parameters alone cost minutes.
_hasher = PasswordHasher()
# A real hash of a throw-away string with the same parameters, made once. Verifying against it
# when an account or PIN is missing makes "no such user" cost as much time as "wrong password",
# so timing does not reveal which names exist.
_dummy_hash: str | None = None


def use_hasher(hasher: PasswordHasher) -> None:
    """Hash and verify with `hasher` from now on (tests: cheaper parameters)."""
    global _hasher, _dummy_hash
    _hasher, _dummy_hash = hasher, None


def _dummy() -> str:
    global _dummy_hash  # noqa: PLW0603 - a cache of one value, made from the current hasher
    if _dummy_hash is None:
        _dummy_hash = _hasher.hash("throw-away secret for unknown names")
    return _dummy_hash


@dataclass(frozen=True, slots=True)
class Verification:
    """Outcome of checking a secret; `needs_rehash` asks the caller to store a fresh hash."""

    ok: bool
    needs_rehash: bool = False


def _hash_sync(secret: str) -> str:
    return _hasher.hash(secret)


def _verify_sync(stored_hash: str | None, secret: str) -> Verification:
    hasher = _hasher
    try:
        hasher.verify(stored_hash or _dummy(), secret)
    except (VerificationError, InvalidHashError):
        return Verification(ok=False)
    if stored_hash is None:
        return Verification(ok=False)
    return Verification(ok=True, needs_rehash=hasher.check_needs_rehash(stored_hash))


async def hash_secret(secret: str) -> str:
    """argon2id hash of a password or PIN, computed off the event loop."""
    return await asyncio.to_thread(_hash_sync, secret)


async def verify_secret(stored_hash: str | None, secret: str) -> Verification:
    """Check `secret` against `stored_hash`; `None` (no such user) costs the same and fails."""
    return await asyncio.to_thread(_verify_sync, stored_hash, secret)


def normalize_invitation_code(code: str) -> str:
    """Codes are read aloud and typed by hand, so case, spaces and dashes do not count."""
    return "".join(code.split()).replace("-", "").casefold()


INVITATION_KEY_CONTEXT = b"vollmond invitation codes v1"


def invitation_key(service_secret: str) -> bytes:
    """The key for invitation-code HMACs, derived from the service's secret (secret.key).

    A key of its own (not the cookie-signing key itself), so that one use can never be turned
    against the other.
    """
    return hmac.new(service_secret.encode(), INVITATION_KEY_CONTEXT, hashlib.sha256).digest()


def invitation_code_hash(code: str, key: bytes) -> str:
    """Lookup key for an invitation code: HMAC-SHA-256 with the service's key.

    Codes have 50 bits; a bare hash of one can be brute-forced from a copy of the database in
    days. With the key kept outside the database (the data directory, 0600) a stolen database
    gives nothing to try codes against. Still fast and deterministic, so the lookup stays an
    index hit (attempts are rate-limited).
    """
    return hmac.new(key, _normalized(code).encode(), hashlib.sha256).hexdigest()


SEAT_CODE_KEY_CONTEXT = b"vollmond seat codes v1"


def seat_code_hash(code: str, invitation_key: bytes) -> str:
    """Lookup key for a guest's seat code: HMAC-SHA-256 with a key of its own, derived from
    the invitation key (itself from the service's secret). A seat code has only 4-6 digits, so
    a bare hash would be no secret at all to whoever copies the database; with the key outside
    it, the copy names no code. Deterministic, so the lookup is an index hit (guessing is
    rate-limited per call and per source)."""
    key = hmac.new(invitation_key, SEAT_CODE_KEY_CONTEXT, hashlib.sha256).digest()
    return hmac.new(key, code.strip().encode(), hashlib.sha256).hexdigest()


def legacy_invitation_code_hash(code: str) -> str:
    """The bare SHA-256 that rounds founded before migration 0005 were stored with; only
    read, to let those rounds' codes keep working (store/games.py rehashes on first use)."""
    return hashlib.sha256(_normalized(code).encode()).hexdigest()


def _normalized(code: str) -> str:
    normalized = normalize_invitation_code(code)
    if not normalized:
        raise ValueError("empty invitation code")
    return normalized
