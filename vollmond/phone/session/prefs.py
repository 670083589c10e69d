"""A caller's own telephone preferences (expert mode), kept with the phone identity.

Stored through the hub's phone identities (the telephone does not open the store,
tests/test_architecture.py): a signed-in caller finds expert mode as they left it on every
later call, on any node and after a restart. A guest has no identity, so a guest's choice
lasts for the call only (the session keeps it).
"""

from __future__ import annotations

from vollmond.service.hub import Hub


async def expert_for(hub: Hub, identity_id: int | None) -> bool:
    return identity_id is not None and await hub.identities.expert(identity_id)


async def set_expert(hub: Hub, identity_id: int | None, on: bool) -> None:
    if identity_id is not None:
        await hub.identities.set_expert(identity_id, on)
