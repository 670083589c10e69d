"""What the SIP server trusts and how many calls and datagrams it takes (docs/security.md)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SipSettings:
    """Limits and trust of the telephone entry path."""

    # Addresses of SIP proxies/trunks (e.g. Kamailio) whose P-Asserted-Identity is believed and
    # whose SDP may name a media address other than the signalling source.
    trusted_proxies: tuple[str, ...] = ()
