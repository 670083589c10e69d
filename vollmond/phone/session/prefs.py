"""A caller's own telephone preferences (expert mode), kept per phone identity.

Kept in the node's memory per hub (like the seats of phone identities in :mod:`.menu`): a
signed-in caller finds expert mode as they left it on their next call to this node; a guest's
choice lasts for the call. Not written to the database — that would need a migration, which
this change avoids (docs/decisions.md, "Telephone: brevity and priorities").
"""

from __future__ import annotations

import weakref

from vollmond.service.hub import Hub

_EXPERT: weakref.WeakKeyDictionary[Hub, set[int]] = weakref.WeakKeyDictionary()


def expert_for(hub: Hub, identity_id: int | None) -> bool:
    return identity_id is not None and identity_id in _EXPERT.get(hub, set())


def set_expert(hub: Hub, identity_id: int | None, on: bool) -> None:
    if identity_id is None:
        return
    chosen = _EXPERT.setdefault(hub, set())
    if on:
        chosen.add(identity_id)
    else:
        chosen.discard(identity_id)
