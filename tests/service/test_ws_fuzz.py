"""Hypothesis against a live socket: arbitrary JSON, protocol-shaped junk and raw bytes.

Whatever arrives, the connection handler answers or ignores it, the socket stays usable, the
server stays healthy, and the game changes only by commands the server acknowledged.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from vollmond.engine.standard.ruleset import CODEC
from vollmond.engine.standard.types import ActionKind

from .support import Service, WsClient, hello, ws_client
from .wsplay import FOUR_DECK, SLOW, table

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
small_ints = st.integers(min_value=-3, max_value=12) | json_scalars
commands = st.fixed_dictionaries(
    {"type": st.sampled_from([*CODEC.types, "Dance", ""]) | st.text(max_size=10)},
    optional={
        "actor": small_ints,
        "target": small_ints,
        "callee": small_ints,
        "kind": st.sampled_from([k.value for k in ActionKind]) | st.text(max_size=8),
        "accept": st.booleans() | json_scalars,
        "text": st.text(max_size=40) | json_scalars,
        "phase_seq": small_ints,
        "extra": json_values,
    },
)
messages = st.fixed_dictionaries(
    {"type": st.sampled_from(["hello", "command", "sync", "ping", "pong", "welcome", "error"])},
    optional={
        "command": commands | json_values,
        "id": small_ints,
        "game": st.just("GAME") | st.text(max_size=40) | json_scalars,
        "token": st.just("TOKEN") | st.text(max_size=40) | json_scalars,
        "spectate": st.booleans() | json_scalars,
        "v": small_ints,
        "after": small_ints,
        "lang": st.sampled_from(["de", "en", "fr"]) | json_scalars,
    },
)
# Well-formed hellos for the real game and seat, with the values a probe used: sequence
# numbers beyond every integer column, NUL in ids and tokens.
hellos = st.fixed_dictionaries(
    {
        "type": st.just("hello"),
        "game": st.just("GAME") | st.just("GAME\u0000") | st.text(max_size=10),
        "token": st.just("TOKEN") | st.just("\u0000TOKEN"),
        "after": st.integers(min_value=-(2**70), max_value=2**70)
        | st.sampled_from([2**31, 2**63, -1]),
    },
    optional={"v": small_ints, "lang": st.sampled_from(["de", "en"])},
)
payloads = st.one_of(
    hellos.map(json.dumps),
    messages.map(json.dumps),
    json_values.map(json.dumps),
    st.text(max_size=200),
    st.binary(max_size=200),
)


async def ping_counting_acks(client: WsClient) -> int:
    """Ping; read up to the pong; return how many commands the server acknowledged meanwhile."""
    await client.send({"type": "ping"})
    acks = 0
    while True:
        frame = await client.recv(10)
        if frame["type"] == "ack":
            acks += 1
        elif frame["type"] == "error":
            assert isinstance(frame["code"], str)
            assert frame["code"]
        elif frame["type"] == "pong":
            return acks


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    greeting=st.sampled_from(["none", "seat", "spectate"]),
    seat=st.integers(min_value=1, max_value=4),
    sent=st.lists(payloads, min_size=1, max_size=5),
)
# The probe's finding, always tried first: `after` beyond the store's integer range.
@example(
    greeting="none",
    seat=1,
    sent=['{"type": "hello", "game": "GAME", "token": "TOKEN", "after": 9223372036854775808}'],
)
async def test_no_input_crashes_the_socket_or_changes_the_game_unacknowledged(
    fast_service: Service,
    greeting: str,
    seat: int,
    sent: list[str | bytes],
) -> None:
    game_id, tokens = await fuzz_table(fast_service)
    actor = fast_service.hub.actors[game_id]
    before_state, before_applied = actor.state, actor.commands_applied
    async with ws_client(fast_service) as client:
        if greeting == "seat":
            assert (await hello(client, game_id, tokens[seat - 1]))["type"] == "welcome"
        elif greeting == "spectate":
            assert (await hello(client, game_id, spectate=True))["type"] == "welcome"
        acks = await ping_counting_acks(client)  # flush the welcome
        for payload in sent:
            if isinstance(payload, str):  # the real game and seat, sometimes
                await client.send(
                    payload.replace("GAME", game_id).replace("TOKEN", tokens[seat - 1])
                )
            else:
                await client.send(payload)
            acks += await ping_counting_acks(client)
    if acks == 0:
        assert actor.state is before_state
    assert actor.commands_applied == before_applied + acks
    async with httpx.AsyncClient() as http:
        assert (await http.get(f"{fast_service.base_url}/healthz")).status_code == 200


_tables: dict[int, tuple[str, list[str]]] = {}


async def fuzz_table(service: Service) -> tuple[str, list[str]]:
    """One slow-timer game per service (hypothesis runs many examples on one fixture)."""
    key = id(service)
    if key not in _tables:
        _tables[key] = await table(service, 4, FOUR_DECK, SLOW, calls={"enabled": False})
    return _tables[key]


async def test_raw_bytes_and_junk_keep_the_server_serving_others(
    fast_service: Service,
) -> None:
    """A fixed sample of the worst inputs, next to a player who keeps playing."""
    game_id, tokens = await fuzz_table(fast_service)
    junk: list[Any] = [b"\x00" * 100, "\ud7ff" * 50, "null", "0", '""', "{}", '{"type": null}']
    async with ws_client(fast_service) as player, ws_client(fast_service) as attacker:
        assert (await hello(player, game_id, tokens[0]))["type"] == "welcome"
        for payload in junk:
            await attacker.send(payload)
            assert (await attacker.expect("error"))["code"]
        await player.send({"type": "ping"})
        await player.expect("pong")
        assert not [f for f in player.frames if f["type"] == "error"]
