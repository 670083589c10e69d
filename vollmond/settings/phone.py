"""What a caller's line waits for and how guests get back to their seat (docs/phone-keys.md).

The ``[phone]`` table of the operator's settings file. Silence: how long the line stays quiet
before a short reminder, and after how many reminders the announcer says goodbye. Seat codes:
how long the code a guest hears is, how many wrong codes a call and a source address may type
(per window) before they may try no more, and how long a code is kept (it also dies with its
game). Media: how many processes carry the calls' RTP, and at which real-time priority.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PhoneSettings:
    """Silence re-prompts and guest seat codes."""

    # Seconds the line is quiet with no key before a reminder (0: never remind).
    silence_s: float = 8.0
    # Reminders in the announcer before goodbye and hang-up.
    reminders: int = 3
    # Digits of a guest's seat code (4-6: short to hear, long enough to guess rarely).
    seat_code_digits: int = 5
    # Wrong seat codes within one call before it may try no more.
    seat_code_tries_per_call: int = 3
    # Wrong seat codes from one source address within `seat_code_source_window_s`.
    seat_code_tries_per_source: int = 10
    seat_code_source_window_s: float = 3_600.0
    # How long a seat code is kept after it was said (it dies with its game before that).
    seat_code_ttl_s: float = 43_200.0
    # Processes for the calls' RTP, 20 ms clock and mixing (docs/voice.md, "The media
    # process"); 0: on the service's own event loop. One by default: its clock does not wait
    # for the web and the engine (docs/decisions.md, helper "media").
    media_processes: int = 1
    # Real-time priority (SCHED_RR, 1-99) of the media processes, so that their 20 ms clock is
    # not kept waiting by the other processes of a busy machine; 0: an ordinary process. Tried
    # by default; it needs CAP_SYS_NICE (or RLIMIT_RTPRIO, the systemd unit's LimitRTPRIO=20),
    # and without it one line is logged and they run ordinarily.
    media_priority: int = 20

    def __post_init__(self) -> None:
        if not 4 <= self.seat_code_digits <= 6:
            raise ValueError("seat_code_digits must be 4, 5 or 6")
        if self.silence_s < 0 or self.reminders < 1:
            raise ValueError("silence_s must be >= 0 and reminders >= 1")
        for name in ("seat_code_tries_per_call", "seat_code_tries_per_source"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        if not 0 <= self.media_processes <= 64:
            raise ValueError("media_processes must be 0 to 64")
        if not 0 <= self.media_priority <= 99:
            raise ValueError("media_priority must be 0 to 99")
        if not (self.seat_code_source_window_s > 0 and self.seat_code_ttl_s > 0):
            raise ValueError("seat_code_source_window_s and seat_code_ttl_s must be positive")
