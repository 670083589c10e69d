"""The web layer encodes one view message per state and viewer (connection.py
`view_message`), shared by every socket of that viewer. The cache must be keyed by the whole
viewer: a seat's secrets (its role, its night room) never reach another seat or a spectator
through it, and a new state is never answered with an old state's view."""

from __future__ import annotations

import json
import random
from typing import Any

from vollmond.engine.core import Viewer
from vollmond.engine.standard import GameOptions
from vollmond.engine.standard.rules import start_with_roles
from vollmond.engine.standard.ruleset import StandardRuleSet
from vollmond.engine.standard.types import RoleId
from vollmond.service.web.connection import view_message


class _Actor:
    """The two things `view_message` asks of a game actor."""

    def __init__(self, state: Any) -> None:
        self.state = state

    def view_for(self, viewer: Viewer) -> dict[str, Any]:
        return dict(StandardRuleSet().view(self.state, viewer).to_json())


def _seats(text: str) -> dict[int, str | None]:
    view = json.loads(text)["view"]
    return {seat["seat"]: seat["role"] for seat in view["seats"]}


def test_each_viewer_gets_its_own_view_and_a_new_state_a_new_one() -> None:
    roles = (RoleId.EVIL, RoleId.EVIL, RoleId.SEER, RoleId.FILLER, RoleId.FILLER)
    opened = start_with_roles(GameOptions(players=5), roles, frozenset(), random.Random(1))
    actor = _Actor(opened.state)
    wolf = view_message(actor, Viewer.player(1))
    seer = view_message(actor, Viewer.player(3))
    spectator = view_message(actor, Viewer.spectator())
    assert _seats(wolf)[2] == "evil"  # the wolf knows his partner
    assert _seats(seer) == {1: None, 2: None, 3: "seer", 4: None, 5: None}
    assert set(_seats(spectator).values()) == {None}
    assert view_message(actor, Viewer.player(3)) is seer  # once per state and viewer
    assert view_message(actor, Viewer.player(1)) is wolf

    actor.state = start_with_roles(
        GameOptions(players=5), roles[::-1], frozenset(), random.Random(1)
    ).state
    assert _seats(view_message(actor, Viewer.player(3)))[3] == "seer"
    assert _seats(view_message(actor, Viewer.player(1)))[1] == "filler"
