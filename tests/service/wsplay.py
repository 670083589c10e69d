"""Helpers for WebSocket tests: a fast-timer service, seated tables and a browser-like player.

The player picks only from `view.me.legal` (what the server says it may do), as the browser
does, plus a little chat and calls, so a whole game runs through the real protocol.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

from vollmond.engine.standard.options import decode_options as options_from_json
from vollmond.service.policy import DurationBounds, Policy

from .support import Service, WsClient

FAST_POLICY = Policy(durations=DurationBounds(min_s=0.05))
SLOW = {"night_s": 600.0, "steal_s": 600.0, "day_s": 600.0, "vote_s": 600.0}
FAST = {
    "steal_s": 0.4,
    "night_s": 1.5,
    "morning_s": 0.2,
    "day_s": 0.8,
    "vote_s": 0.6,
    "floor_s": 0.2,
}
FAST_CALLS = {"enabled": True, "max_duration_s": 0.4, "ring_s": 0.2, "per_night": 2}
# Who plays which card matters for the secrecy checks: one evil, a seer, a witch, a doctor.
FIVE_DECK = [["evil", 1], ["seer", 1], ["witch", 1], ["doctor", 1], ["filler", 1]]
FOUR_DECK = [["evil", 1], ["seer", 1], ["filler", 2]]
_tables = itertools.count(1)


async def table(
    service: Service,
    players: int,
    deck: list[list[Any]],
    durations: dict[str, float],
    calls: dict[str, Any] = FAST_CALLS,
) -> tuple[str, list[str]]:
    """A running public game with guest seats, seated through the hub.

    The lobby's HTTP path is tested in test_lobby; here it would only add argon2 hashing per
    seat, and the first (short) night could pass before the sockets are connected.
    """
    options = options_from_json(
        {
            "players": players,
            "deck": "custom",
            "custom_roles": deck,
            "durations": durations,
            "calls": calls,
        }
    )
    prefix = f"T{next(_tables)}P"
    founded = await service.hub.found(
        options, private=False, host_account_id=None, host_name=f"{prefix}1"
    )
    assert founded.token is not None
    tokens = [founded.token]
    for seat in range(2, players + 1):
        joined = await service.hub.join(founded.game.id, account_id=None, name=f"{prefix}{seat}")
        tokens.append(joined.token)
    assert service.hub.running_phase(founded.game.id) is not None
    return founded.game.id, tokens


class Player:
    """Acts on each fresh view: abilities, nominations and votes first, sometimes a call."""

    def __init__(self, client: WsClient, seat: int, rng: random.Random) -> None:
        self.client = client
        self.seat = seat
        self.rng = rng
        self.next_id = 1
        self.acted: dict[int, int] = {}  # phase_seq -> commands sent in it

    def choose(self, view: dict[str, Any]) -> dict[str, Any] | None:
        me = view.get("me")
        if not me or not me["alive"] or view["phase"] == "over":
            return None
        legal: list[dict[str, Any]] = me["legal"]
        by_type: dict[str, list[dict[str, Any]]] = {}
        for command in legal:
            by_type.setdefault(command["type"], []).append(command)
        answer = [c for c in by_type.get("AnswerCall", []) if c["accept"]]
        if answer:
            return answer[0]
        for kind, chance in (("UseAbility", 1.0), ("Vote", 0.9), ("Nominate", 0.5)):
            options = by_type.get(kind, [])
            if kind == "Vote":
                options = [c for c in options if c["target"] is not None] or options
            if options and self.rng.random() < chance:
                return self.rng.choice(options)
        if by_type.get("PlaceCall") and self.rng.random() < 0.3:
            return self.rng.choice(by_type["PlaceCall"])
        if self.rng.random() < 0.1:
            return {"type": "Say", "actor": self.seat, "text": "Ich war es nicht."}
        return None

    async def react(self, view: dict[str, Any]) -> None:
        sent = self.acted.get(view["phase_seq"], 0)
        if sent >= 4:
            return
        command = self.choose(view)
        if command is None:
            return
        self.acted[view["phase_seq"]] = sent + 1
        await self.client.send({"type": "command", "id": self.next_id, "command": command})
        self.next_id += 1

    async def play(self, timeout: float = 90.0) -> None:
        """Until game_over, then a short drain for the final view."""
        views = [f for f in self.client.frames if f["type"] in ("welcome", "view")]
        if views:  # the welcome was read by `hello` already
            await self.react(views[-1]["view"])
        while True:
            frame = await self.client.recv(timeout)
            if frame["type"] in ("welcome", "view"):
                await self.react(frame["view"])
            elif frame["type"] == "event" and frame["code"] == "game_over":
                break
        await self.client.quiet(0.5)
