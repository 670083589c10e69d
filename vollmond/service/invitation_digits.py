"""Invitation codes in digits: the 10-symbol code read as one number, in 16 digits.

The invitation alphabet has 32 symbols, so a code is a base-32 number below 32**10 = 2**50,
which always fits in 16 decimal digits. The mapping is a bijection: every code has exactly one
phone code and back, the browser can show both, and no letters-on-keys guessing is needed.
Phone codes are spoken and typed in four groups of four digits (`vollmond.phone.session.codes`);
the browser shows them next to the letters (a private conference room's code, X2).
"""

from __future__ import annotations

from typing import Final

from vollmond.service.hub import INVITATION_ALPHABET, INVITATION_LENGTH

PHONE_CODE_DIGITS: Final = 16
_BASE: Final = len(INVITATION_ALPHABET)
_LIMIT: Final = _BASE**INVITATION_LENGTH


def phone_code(invitation_code: str) -> str:
    """The 16-digit phone code of an invitation code (case and spaces ignored)."""
    cleaned = "".join(invitation_code.split()).upper()
    if len(cleaned) != INVITATION_LENGTH or any(c not in INVITATION_ALPHABET for c in cleaned):
        raise ValueError("not an invitation code")
    value = 0
    for symbol in cleaned:
        value = value * _BASE + INVITATION_ALPHABET.index(symbol)
    return f"{value:0{PHONE_CODE_DIGITS}d}"


def invitation_from_phone(digits: str) -> str | None:
    """The invitation code a typed phone code stands for, or None if it cannot be one."""
    if len(digits) != PHONE_CODE_DIGITS or not digits.isdigit():
        return None
    value = int(digits)
    if value >= _LIMIT:
        return None
    symbols = []
    for _ in range(INVITATION_LENGTH):
        value, index = divmod(value, _BASE)
        symbols.append(INVITATION_ALPHABET[index])
    return "".join(reversed(symbols))
