"""The standard rule set's random bot picks from its seat's menu (legal.py `seat_menu`) and the
groups' legal commands, not by probing every candidate: what it sends must be legal in every
state of every kind of game, every legal command must be within its reach, and a kind it is
never keen on must never be chosen."""

from __future__ import annotations

import random
from functools import partial

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.engine.driver import states_along
from tests.engine.test_properties import foundings, temperaments
from vollmond.engine.standard import (
    GameOptions,
    GameState,
    Phase,
    Vote,
    apply,
    new_game,
    validate,
)
from vollmond.engine.standard.bots import RandomBot, Temperament
from vollmond.engine.standard.legal import command_groups, legal_actions
from vollmond.engine.standard.replay import rng_for
from vollmond.engine.standard.sim import play_game
from vollmond.engine.standard.smart_bot import SmartBot

EAGER = Temperament(
    ability=1.0,
    keenness={
        "nominate": 1.0,
        "vote": 1.0,
        "interject": 1.0,
        "call": 1.0,
        "answer": 1.0,
        "hang_up": 1.0,
        "toggle": 1.0,
    },
)


def game_states(options: GameOptions, seed: int, temperament: Temperament) -> list[GameState]:
    game = play_game(options, seed, temperament=temperament, max_commands=400)
    opened = new_game(options, rng_for(seed, 0))
    return states_along(opened, apply, game.commands, partial(rng_for, seed))


@settings(max_examples=25, deadline=None)
@given(options=foundings(), seed=st.integers(0, 1_000_000), temperament=temperaments())
def test_the_bot_only_sends_legal_commands(
    options: GameOptions, seed: int, temperament: Temperament
) -> None:
    """In every state of a game, every seat's bot (its own random stream, asked three times)
    chooses nothing or a command `validate` accepts."""
    chosen = 0
    states = game_states(options, seed, temperament)
    for index, state in enumerate(states):
        for seat in range(1, options.players + 1):
            bot = RandomBot(seat, random.Random(f"{seed}:{index}:{seat}"), temperament)
            for _ in range(3):
                command = bot.choose(state)
                if command is not None:
                    assert validate(state, command) is None, (command, state.phase)
                    chosen += 1
    if states[0].phase is not Phase.OVER:  # a deck can decide the game at the deal
        assert chosen > 0


def test_every_legal_command_is_within_reach() -> None:
    """A bot keen on everything, asked often enough, chooses exactly the seat's legal
    commands: the menu hides nothing and offers nothing else."""
    options = GameOptions(players=10)
    states = game_states(options, 3, Temperament())
    reached = 0
    for state in states[::2]:
        for seat in range(1, options.players + 1):
            legal = legal_actions(state, seat)
            bot = RandomBot(seat, random.Random(f"reach:{seat}"), EAGER)
            seen = {bot.choose(state) for _ in range(40 * len(legal) + 1)}
            assert seen == set(legal) | ({None} if not legal else set())
            reached += len(legal)
    assert reached > 500


def test_a_kind_the_bot_never_wants_is_never_chosen() -> None:
    """Keenness 0 for everything but the vote, which it is sure to want: such a bot votes
    whenever it may and gives nothing else, though much else is offered to it."""
    options = GameOptions(players=8)
    keenness = dict.fromkeys(EAGER.keenness, 0.0) | {"vote": 1.0}
    voter = Temperament(ability=0.0, keenness=keenness)
    offered = voted = 0
    for state in game_states(options, 5, Temperament()):
        for seat in range(1, options.players + 1):
            kinds = {group.kind for group in command_groups(state, seat) if group.legal()}
            command = RandomBot(seat, random.Random(seat), voter).choose(state)
            if "vote" in kinds:
                assert isinstance(command, Vote)
                voted += 1
            else:
                assert command is None, command
                offered += bool(kinds)
    assert offered > 0 and voted > 0


def test_a_seat_out_of_the_game_and_in_no_call_has_nothing_to_say() -> None:
    """The simulator does not ask a seat out of the game while no call is on (sim.py): the
    bots of such a seat must say nothing and draw nothing, or skipping them would change the
    games bots play."""
    asked = 0
    for options, seed in ((GameOptions(players=12), 2), (GameOptions(players=9, lovers=True), 4)):
        for state in game_states(options, seed, Temperament()):
            if state.calls:
                continue
            for player in state.players:
                if player.alive:
                    continue
                for make in (RandomBot, SmartBot):
                    for temperament in (Temperament(), EAGER):
                        rng = random.Random(player.seat)
                        before = rng.getstate()
                        bot = make(player.seat, rng, temperament)
                        assert bot.choose(state) is None
                        assert rng.getstate() == before
                        asked += 1
    assert asked > 100
