"""SIP signalling: message codec and a small UDP user agent server."""
