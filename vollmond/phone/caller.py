"""Who is calling, as far as the network says: the value the session factory receives.

Three facts with very different weight (docs/security.md "Telephone identity"):

- `number`: the user part of the From header — the caller's own claim, trivially spoofed;
  it may only pre-fill the phone ID.
- `asserted_number`: the number a trusted SIP proxy asserted (P-Asserted-Identity from an
  address in ``SipSettings.trusted_proxies``); None for every other call. Only this may sign
  in without a PIN, and only for a number verified through such a proxy.
- `source_host`: the address the signalling came from; wrong PINs are limited per source.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CallerId:
    number: str
    asserted_number: str | None = None
    source_host: str = ""

    @property
    def pin_source(self) -> str:
        """What wrong PINs are counted against: the asserted number behind a trusted proxy
        (every call through it shares the proxy's address), else the signalling address.

        >>> CallerId("123", None, "192.0.2.7").pin_source
        'ip:192.0.2.7'
        >>> CallerId("123", "+4930555", "10.0.0.2").pin_source
        'asserted:+4930555'
        """
        if self.asserted_number is not None:
            return f"asserted:{self.asserted_number}"
        return f"ip:{self.source_host}"

    @property
    def best_number(self) -> str:
        """The asserted number when there is one, else the From number."""
        return self.asserted_number if self.asserted_number is not None else self.number


def user_part(uri: str) -> str:
    """The user part of a SIP or tel URI (or a bare number); "anonymous" when there is none.

    >>> user_part("sip:+4930123@10.0.0.1;user=phone")
    '+4930123'
    >>> user_part("sip:10.0.0.1")
    'anonymous'
    >>> user_part("tel:+4930123;phone-context=x")
    '+4930123'
    >>> user_part("<sip:+4930123@proxy>")
    '+4930123'
    >>> user_part("+4930123")
    '+4930123'
    """
    uri = uri.strip()
    if uri.startswith("<"):
        uri = uri[1:].split(">", 1)[0]
    scheme, colon, rest = uri.partition(":")
    if not colon:
        return uri.split(";", 1)[0] or "anonymous"
    user, at, _ = rest.partition("@")
    if not at and scheme.lower() != "tel":
        user = ""
    return user.split(";", 1)[0] or "anonymous"
