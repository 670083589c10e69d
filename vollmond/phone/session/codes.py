"""Invitation codes on the keypad: their 16-digit form (shared with the browser, so it lives in
`vollmond.service.invitation_digits`) and how a caller hears it, in four groups of four digits.
"""

from __future__ import annotations

from vollmond.service.invitation_digits import (
    PHONE_CODE_DIGITS,
    invitation_from_phone,
    phone_code,
)

__all__ = ["PHONE_CODE_DIGITS", "invitation_from_phone", "phone_code", "spoken_groups"]


def spoken_groups(digits: str) -> list[str]:
    """'1234567890123456' -> ['1 2 3 4', ...]: digits read one by one, in groups of four."""
    return [" ".join(digits[i : i + 4]) for i in range(0, len(digits), 4)]
