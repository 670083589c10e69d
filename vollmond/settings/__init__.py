"""Operator settings that are not game rules: what the service trusts and how much it accepts.

Each group has its own module and is one table of the operator's TOML file (`--config`,
:func:`vollmond.settings.toml.load_config`); every value has a safe default here, so a service
without a file is a closed one (no trusted proxies, conservative limits).
"""

from vollmond.settings.identity import IdentitySettings
from vollmond.settings.phone import PhoneSettings
from vollmond.settings.sip import SipSettings
from vollmond.settings.web import WebSettings

__all__ = ["IdentitySettings", "PhoneSettings", "SipSettings", "WebSettings"]
