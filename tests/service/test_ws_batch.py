"""`batch` frames (docs/protocol.md): a client that asks for them in its hello gets what the
server has for it at once as one frame — the same messages in the same order as a client
that did not ask, which gets one frame per message. Against a running service."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from vollmond.service.web import connection

from .support import Service, WsClient, hello, open_ws
from .test_ws import close_all, command, dealt_roles
from .wsplay import FOUR_DECK, SLOW, table


def unpacked(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages of `frames`, a batch frame's in their order."""
    out: list[dict[str, Any]] = []
    for frame in frames:
        out.extend(frame["messages"] if frame["type"] == "batch" else [frame])
    return out


def shape(messages: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """What a client acts on, without the parts that differ by language or request id."""
    return [(m["type"], m.get("seq", m.get("view"))) for m in messages]


async def seated(service: Service, game_id: str, token: str, **extra: Any) -> WsClient:
    client = await open_ws(service)
    assert (await hello(client, game_id, token, **extra))["type"] == "welcome"
    return client


async def test_a_batching_socket_gets_the_same_messages_in_fewer_frames(
    fast_service: Service,
) -> None:
    game_id, tokens = await table(fast_service, 4, FOUR_DECK, SLOW)
    plain = [await seated(fast_service, game_id, t) for t in tokens]
    try:
        await asyncio.gather(*(c.quiet(0.2) for c in plain))
        evil = next(seat for seat, role in dealt_roles(plain).items() if role == "evil")
        # A second tab of the evil seat that takes batch frames, beside the plain one.
        batching = await seated(fast_service, game_id, tokens[evil - 1], batch=True)
        plain_tab = plain[evil - 1]
        await batching.quiet(0.2)
        await plain_tab.quiet(0.2)
        batching.frames.clear()
        plain_tab.frames.clear()

        await plain_tab.send(command(evil, "UseAbility", kind="evil_vote", target=1 + evil % 4))
        await plain_tab.expect("ack")
        await batching.quiet(0.3)
        await plain_tab.quiet(0.3)

        # The vote's event and the fresh view (the night room's votes) reach both tabs (the
        # ack only the tab that sent it)...
        told = [f for f in plain_tab.frames if f["type"] != "ack"]
        assert shape(unpacked(batching.frames)) == shape(told)
        assert {"event", "view"} <= {m["type"] for m in plain_tab.frames}
        # ... the plain tab one frame each, the batching tab all in one frame: the fan-out
        # hands the command's events and the view to it before its writer runs.
        assert len(told) >= 2
        assert all(f["type"] != "batch" for f in plain_tab.frames)
        assert len(batching.frames) == 1
        assert batching.frames[0]["type"] == "batch"
        assert [m["type"] for m in batching.frames[0]["messages"]] == [m["type"] for m in told]
    finally:
        await close_all([*plain, batching])


async def test_a_batching_seat_gets_its_commands_events_ack_and_view_in_one_frame(
    fast_service: Service,
) -> None:
    """The sender's own command: its events, its ack and the view after them are one frame
    (the writer waits for the ack while the command is applied), not the events and the view
    first and the ack alone after them — one `write` per command for the sender, as for
    every other seat it reaches."""
    game_id, tokens = await table(fast_service, 4, FOUR_DECK, SLOW)
    plain = [await seated(fast_service, game_id, t) for t in tokens]
    try:
        await asyncio.gather(*(c.quiet(0.2) for c in plain))
        evil = next(seat for seat, role in dealt_roles(plain).items() if role == "evil")
    finally:
        await close_all(plain)
    sender = await seated(fast_service, game_id, tokens[evil - 1], batch=True)
    try:
        await sender.quiet(0.2)
        sender.frames.clear()

        vote = command(evil, "UseAbility", kind="evil_vote", target=1 + evil % 4)
        await sender.send({**vote, "cid": "c1"})
        await sender.quiet(0.3)

        assert len(sender.frames) == 1, [f["type"] for f in sender.frames]
        (frame,) = sender.frames
        assert frame["type"] == "batch"
        kinds = [m["type"] for m in frame["messages"]]
        assert kinds[-2:] == ["ack", "view"], kinds  # the view comes after the burst
        assert "event" in kinds[:-2]
        ack = frame["messages"][-2]
        assert ack["cid"] == "c1"
        assert ack["id"] == vote["id"]
        first = next(m for m in frame["messages"] if m["type"] == "event")
        assert ack["seq"] == first["seq"]  # its own events came before the ack
    finally:
        await sender.close()


async def test_a_long_catch_up_comes_in_frames_of_at_most_the_batch_limit(
    fast_service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(connection, "BATCH_MAX", 2)
    game_id, tokens = await table(fast_service, 4, FOUR_DECK, SLOW)
    first = await seated(fast_service, game_id, tokens[0])
    try:
        await first.quiet(0.3)
        seen = [m["seq"] for m in first.frames if m["type"] == "event"]
        assert len(seen) >= 3  # the start, the deal, the night: more than one batch's worth
    finally:
        await first.close()

    back = await seated(fast_service, game_id, tokens[0], batch=True, after=0)
    try:
        await back.quiet(0.3)
        caught_up = [m["seq"] for m in unpacked(back.frames) if m["type"] == "event"]
        assert caught_up == seen  # every event once, in log order
        batches = [f for f in back.frames if f["type"] == "batch"]
        assert batches, back.frames
        assert all(len(b["messages"]) <= 2 for b in batches)
    finally:
        await back.close()


async def test_batch_must_be_a_boolean(fast_service: Service) -> None:
    game_id, tokens = await table(fast_service, 4, FOUR_DECK, SLOW)
    client = await open_ws(fast_service)
    try:
        refused = await hello(client, game_id, tokens[0], batch="yes")
        assert refused["code"] == "invalid_message"
    finally:
        await client.close()
