"""Telephony transport: SIP signalling, RTP media, G.711 and DTMF, with no game logic.

Kept free of game concepts so the transport can be tested against real SIP peers on its own
and the game layer only sees calls, digits and audio frames.
"""
