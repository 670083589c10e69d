"""The one error of the mailbox and friends: a code for the channels to explain."""

from __future__ import annotations

from typing import Final

#: How the web answers each code (anything else: 400).
HTTP_STATUS: Final[dict[str, int]] = {
    "unknown_person": 404,
    "mail_not_found": 404,
    "invitation_not_found": 404,
    "mail_blocked": 403,
    "not_friends": 403,
    "mail_full": 409,
    "friend_already": 409,
    "friend_already_asked": 409,
    "friend_unavailable": 409,
    "friend_no_request": 409,
    "friend_offline": 409,
    "friends_full": 409,
    "no_table": 409,
    "table_full": 409,
    "invitation_room": 409,
    "mail_rate": 429,
}


class CommunityError(Exception):
    """A mailbox or friends request that cannot be granted. `code` is a catalogue word
    (``community.error.<code>`` for the phone, the page's ``err_<code>``); `params` fill it."""

    def __init__(self, code: str, **params: int | str) -> None:
        super().__init__(code)
        self.code = code
        self.params = params

    @property
    def status(self) -> int:
        return HTTP_STATUS.get(self.code, 400)
