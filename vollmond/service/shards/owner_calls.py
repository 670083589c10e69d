"""What a process asks the owner of a game, and how the answer travels (JSON both ways).

Everything that changes a game goes to its owner, so that one process serialises it: commands
(`submit`), and the lobby's changes of that game (`join`, `start`, `abort`, `fill_with_bots`,
`leave_lobby`, `stop_aborted`), which today rely on the hub's lock being the only one; and
the owner's presence hears which seats a mirror's sockets follow (`followers`). Reads
are answered from the store or a mirror by any process; only the running phase of a game
nobody follows here is asked (`phase`).

A request: ``{"op": ..., "game": ..., "args": {...}}``; an answer: ``{"ok": result}`` or one
of ``{"lobby_error": code, "message": text}``, ``{"no_game": true}``, ``{"closed": true}``,
``{"cid_reused": true}``, ``{"not_owner": text}``, ``{"failed": text}`` — raised on the
asking side as the error the hub itself would have raised.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import datetime
from typing import Any

from vollmond.engine.core import Rejection
from vollmond.service.actor import ClientIdReusedError, GameClosedError
from vollmond.service.hub import Joined, LobbyError
from vollmond.service.shards.mirror import OwnerAccepted
from vollmond.store import GameNotFoundError
from vollmond.store.seats import Seat

OPS = (
    "submit",
    "join",
    "start",
    "abort",
    "fill_with_bots",
    "leave_lobby",
    "stop_aborted",
    "phase",
    "followers",  # a notice without answer: a mirror's sockets follow a seat (+1) or stop (-1)
    "spectator_say",  # a notice without answer: a line for the spectators' room
)


class OwnerCallError(RuntimeError):
    """The owner failed on a request in a way the hub has no error for."""


class NotOwnerError(OwnerCallError):
    """The node asked does not own the game (any more): ask again who does."""


def request(op: str, game_id: str, **args: Any) -> bytes:
    assert op in OPS
    return json.dumps({"op": op, "game": game_id, "args": args}).encode()


def answer_ok(result: Any) -> bytes:
    return json.dumps({"ok": result}).encode()


def answer_error(exc: BaseException) -> bytes:
    """The answer for an error the owner's hub raised (re-raised by `result`)."""
    if isinstance(exc, LobbyError):
        body: dict[str, Any] = {"lobby_error": exc.code, "message": str(exc)}
    elif isinstance(exc, GameNotFoundError):
        body = {"no_game": True}
    elif isinstance(exc, GameClosedError):
        body = {"closed": True}
    elif isinstance(exc, NotOwnerError):
        body = {"not_owner": str(exc)}
    elif isinstance(exc, ClientIdReusedError):
        body = {"cid_reused": str(exc)}
    else:
        body = {"failed": type(exc).__name__}
    return json.dumps(body).encode()


def result(game_id: str, data: bytes) -> Any:
    """The owner's result, or its error raised here."""
    body = json.loads(data)
    if "ok" in body:
        return body["ok"]
    if "lobby_error" in body:
        raise LobbyError(body["lobby_error"], body["message"])
    if "no_game" in body:
        raise GameNotFoundError(game_id)
    if "closed" in body:
        raise GameClosedError(game_id)
    if "not_owner" in body:
        raise NotOwnerError(body["not_owner"])
    if "cid_reused" in body:
        raise ClientIdReusedError(body["cid_reused"])
    raise OwnerCallError(f"the owner of {game_id} failed: {body.get('failed')}")


# -- results that are not plain JSON -------------------------------------------------------
def outcome_json(outcome: Rejection | OwnerAccepted) -> dict[str, Any]:
    if isinstance(outcome, Rejection):
        return {"rejected": outcome.code, "params": dict(outcome.params)}
    return {"first": outcome.first_seq, "next": outcome.next_seq, "repeated": outcome.repeated}


def outcome_of(data: dict[str, Any]) -> Rejection | OwnerAccepted:
    if "rejected" in data:
        return Rejection(str(data["rejected"]), dict(data["params"]))
    return OwnerAccepted(int(data["first"]), (), bool(data["repeated"]), next_seq=int(data["next"]))


def joined_json(joined: Joined) -> dict[str, Any]:
    seat = asdict(joined.seat)
    seat["joined_at"] = joined.seat.joined_at.isoformat()
    return {"game": joined.game_id, "seat": seat, "token": joined.token, "started": joined.started}


def joined_of(data: dict[str, Any]) -> Joined:
    seat = dict(data["seat"])
    seat["joined_at"] = datetime.fromisoformat(seat["joined_at"])
    return Joined(str(data["game"]), Seat(**seat), str(data["token"]), bool(data["started"]))
