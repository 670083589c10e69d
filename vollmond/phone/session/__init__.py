"""The telephone session: one caller's way from the greeting through the announcer into a game.

Pure of SIP: the service (vollmond/phone/service.py) gives it keys and takes 20 ms frames of
prompt audio. See docs/phone-keys.md for every key.
"""

from vollmond.phone.session.prompts import EspeakVoice, PromptQueue, Voice
from vollmond.phone.session.session import OperatorCall, PhoneSession

__all__ = ["EspeakVoice", "OperatorCall", "PhoneSession", "PromptQueue", "Voice"]
