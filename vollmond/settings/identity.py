"""How a caller proves who they are (docs/security.md "Telephone identity", DESIGN.md §7).

A caller number is a claim, never a proof: it only pre-fills the phone ID, and the PIN is asked
every time, unless a trusted SIP proxy asserts a number whose ownership was verified through
such a proxy. PIN guessing is bounded three ways (per call, per identity with a lockout that
survives calls and restarts, per source address), and linking a number needs a one-time code.
The defaults are safe for a public service; operators may tighten or loosen them in the
``[identity]`` table of their settings file.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class IdentitySettings:
    """PIN lockouts, number verification and phone IDs."""

    # Wrong PINs within one call before the caller continues as a guest.
    pin_attempts_per_call: int = 3
    # Consecutive wrong PINs for one phone ID (across calls) that lock it.
    lockout_failures: int = 5
    # The first lockout; each further lockout without a correct PIN in between lasts
    # `lockout_growth` times longer, up to `lockout_max_s`.
    lockout_s: float = 900.0
    lockout_growth: float = 2.0
    lockout_max_s: float = 86_400.0
    # Wrong PINs from one source (signalling address; behind a trusted proxy: the asserted
    # number) within `source_window_s`, for any phone IDs, before that source may try no more.
    source_failures: int = 20
    source_window_s: float = 3_600.0
    # New phone IDs are random numbers of this many digits (never sequential).
    phone_id_digits: int = 7
    # Verification codes for linking a number: digits, lifetime, and how many link requests an
    # account may make within `link_window_s`.
    code_digits: int = 6
    code_ttl_s: float = 600.0
    link_requests: int = 5
    link_window_s: float = 3_600.0
    # Wrong codes per call, and per pending code (across calls from that number).
    code_attempts_per_call: int = 3
    code_attempts_per_claim: int = 5
