"""The community around the games: the mailbox (X3) and friends (X4), for every channel.

One :class:`Community` per hub, made by the app's lifespan (`attach`) with the operator's
`[mailbox]` and `[friends]` settings and the data directory for voice messages; channels find
it with :func:`community_of` (the hub itself does not know it, so it needs no change). Where
processes share the service, whereabouts and invitations are shared by them
(`service/shards/community.py` brings its own `online` and `friends`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
import weakref
from collections.abc import Callable
from pathlib import Path

from vollmond.service.community.errors import CommunityError
from vollmond.service.community.friends import (
    Bound,
    Destination,
    Friends,
    FriendView,
    Invitation,
    Place,
    ToRoom,
    ToTable,
    Whereabouts,
)
from vollmond.service.community.mailbox import Mailbox
from vollmond.service.community.online import Online
from vollmond.service.community.people import Named, find_person, names, parse_key
from vollmond.service.community.voicebox import VoiceBox
from vollmond.service.hub import Hub
from vollmond.settings.community import FriendsSettings, MailboxSettings
from vollmond.store.community import FriendState, Mail, MailKind
from vollmond.store.db import Sessions

MakeFriends = Callable[[Sessions, FriendsSettings, Online], Friends]

__all__ = [
    "Bound",
    "Community",
    "CommunityError",
    "Destination",
    "FriendState",
    "FriendView",
    "Invitation",
    "Mail",
    "MailKind",
    "Mailbox",
    "Named",
    "Place",
    "ToRoom",
    "ToTable",
    "Whereabouts",
    "attach",
    "community_of",
    "find_person",
    "names",
    "parse_key",
]


class Community:
    def __init__(
        self,
        hub: Hub,
        data_dir: Path,
        mailbox: MailboxSettings | None = None,
        friends: FriendsSettings | None = None,
        *,
        online: Online | None = None,
        make_friends: MakeFriends = Friends,
    ) -> None:
        """`online` and `make_friends`: where processes share the service, theirs."""
        self.hub = hub
        friends = friends or FriendsSettings()
        self.online = online or Online(friends.web_online_s)
        self.mail = Mailbox(hub.sessions, mailbox or MailboxSettings(), VoiceBox.open(data_dir))
        self.friends = make_friends(hub.sessions, friends, self.online)
        self._retention: asyncio.Task[None] | None = None

    def start(self) -> None:
        """The retention job (messages older than `retention_days`, not kept, go)."""
        self._retention = asyncio.create_task(self.mail.run_retention(), name="mail-retention")

    async def close(self) -> None:
        if self._retention is not None:
            self._retention.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._retention
        await self.friends.close()
        await self.online.close()


_COMMUNITIES: weakref.WeakKeyDictionary[Hub, Community] = weakref.WeakKeyDictionary()


def attach(community: Community) -> Community:
    _COMMUNITIES[community.hub] = community
    return community


def community_of(hub: Hub) -> Community:
    """The hub's community; a hub without one (tools, tests of other parts) gets one with the
    default settings and its voice messages in a temporary directory (made only if a voice
    message is ever recorded there)."""
    found = _COMMUNITIES.get(hub)
    if found is None:
        scratch = Path(tempfile.gettempdir()) / f"vollmond-mail-{os.getpid()}-{id(hub)}"
        found = attach(Community(hub, scratch))
    return found
