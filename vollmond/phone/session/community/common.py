"""What the mailbox and friends menus share on a call: who the caller is for them, names,
refusals in words, and the way back to the announcer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vollmond.moderation import Area
from vollmond.service.community import Community, CommunityError, Named, community_of
from vollmond.service.hub import Owner

if TYPE_CHECKING:
    from vollmond.phone.session.session import PhoneSession


def community(session: PhoneSession) -> Community:
    return community_of(session.hub)


def person(session: PhoneSession) -> Owner | None:
    """The caller as a person: the linked account, else the phone identity; a guest has
    neither (no mailbox, no friends)."""
    return session.ledger_owner


def spoken_name(session: PhoneSession, named: Named) -> str:
    if named.name is not None:
        return named.name
    digits = " ".join(str(named.phone_id))
    return session.t("phone.community.phone_person", n=digits)


def error_line(session: PhoneSession, exc: CommunityError) -> str:
    params: dict[str, Any] = dict(exc.params)
    return session.t(f"web.errors.{exc.code}", None, **params)


async def admitted(session: PhoneSession, area: Area) -> Owner | None:
    """The caller, if signed in and not banned from `area` (O5: else they hear why)."""
    me = person(session)
    if me is None:
        session.refuse(session.t("phone.community.guest"))
        return None
    if await session.announcer.refused(area):
        return None
    return me


def back_to_announcer(session: PhoneSession) -> None:
    session.set_mode(session.announcer)
    session.announcer.open_menu()
