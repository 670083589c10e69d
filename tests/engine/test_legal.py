"""Legal actions ask the common questions once per group and filter candidates cheaply
(legal.py); the filter must say exactly what `validate` says, for every candidate of every
group, in every state of real games — otherwise a menu would offer something the rules refuse,
or hide something they allow, and bots would play differently from before."""

from __future__ import annotations

import random
from functools import partial

import pytest

from tests.engine.driver import states_along
from vollmond.engine.kit.draws import below, pick
from vollmond.engine.standard import (
    Command,
    DeckId,
    GameOptions,
    Interject,
    Phase,
    PlaceCall,
    UseAbility,
)
from vollmond.engine.standard.legal import (
    CommandGroup,
    command_groups,
    legal_actions,
    legal_menu,
    seat_menu,
)
from vollmond.engine.standard.menus import describe
from vollmond.engine.standard.options import CallSettings
from vollmond.engine.standard.replay import rng_for
from vollmond.engine.standard.rules import apply, new_game, validate
from vollmond.engine.standard.sim import play_game

GAMES = [
    (GameOptions(players=8, world="werwolf"), 1),
    (GameOptions(players=7, world="vampir", deck=DeckId.STARTER), 7),
    (GameOptions(players=13, world="mafia", deck=DeckId.TRIBUNAL, instant_kill=True), 3),
    (GameOptions(players=12), 4),
    (GameOptions(players=10, deck=DeckId.CAULDRON), 6),
    (GameOptions(players=11, deck=DeckId.MAY_DANCE), 7),
    (GameOptions(players=16, deck=DeckId.FULL_MOON), 5),
]


@pytest.mark.parametrize(("options", "seed"), GAMES)
def test_group_filter_agrees_with_validate_on_every_candidate(
    options: GameOptions, seed: int
) -> None:
    game = play_game(options, seed)
    opened = new_game(options, rng_for(seed, 0))
    states = states_along(opened, apply, game.commands, partial(rng_for, seed))
    checked = offered = 0
    for state in states:
        for seat in range(1, options.players + 1):
            for group in command_groups(state, seat):
                for command in group.candidates():
                    allowed = group.allowed(command)
                    assert allowed == (validate(state, command) is None), (command, state.phase)
                    checked += 1
                    offered += allowed
    assert offered > 0 and checked > offered  # both answers occur


# Calls and nominations are worked out per state and shared by the seats (menus.py); these
# settings take the call group through each of its branches (partners only, by day, no
# evil callers, one call a night) and lovers through the partner calls.
FAST_GAMES = [
    *GAMES,
    (GameOptions(players=12, lovers=True, calls=CallSettings(enabled=False)), 8),
    (GameOptions(players=14, lovers=True, calls=CallSettings(by_day=True, per_night=1)), 9),
    (GameOptions(players=12, calls=CallSettings(evil_may_call=False), deck=DeckId.FULL_MOON), 10),
    (GameOptions(players=40), 11),
]


@pytest.mark.parametrize(("options", "seed"), FAST_GAMES)
def test_each_groups_menu_is_its_filtered_candidates(options: GameOptions, seed: int) -> None:
    """A group's `legal` (and its JSON) equals its candidates through `allowed`, which the
    test above holds to `validate`: the shared targets change nothing a seat is offered.
    What a bot draws from the group is one of them, or nothing when there is none."""
    game = play_game(options, seed)
    opened = new_game(options, rng_for(seed, 0))
    states = states_along(opened, apply, game.commands, partial(rng_for, seed))
    kinds: set[str] = set()
    for state in states:
        for seat in range(1, options.players + 1):
            for group in command_groups(state, seat):
                expected = [cmd for cmd in group.candidates() if group.allowed(cmd)]
                legal, described = group.legal_described()
                assert list(legal) == expected, (group.kind, seat, state.phase)
                assert list(group.legal()) == expected
                assert list(described) == [describe(cmd) for cmd in expected]
                drawn = group.draw(random.Random(f"{seat}:{state.phase_seq}"))
                assert drawn in expected if expected else drawn is None
                kinds.update(group.kind for _ in expected[:1])
            menu, menu_json = legal_menu(state, seat)
            assert list(menu) == legal_actions(state, seat)
            assert menu_json == [describe(cmd) for cmd in menu]
    assert {"nominate", "vote", "call"} <= kinds


def _tried(rng: random.Random, group: CommandGroup) -> Command | None:
    """Random candidates, each at most once (the last one moved into a refused one's place),
    until one is allowed: how bots have drawn an ability's target since the third pass."""
    left = group.candidates()
    while left:
        index = below(rng, len(left))
        if group.allowed(left[index]):
            return left[index]
        left[index] = left[-1]
        left.pop()
    return None


@pytest.mark.parametrize(("options", "seed"), FAST_GAMES)
def test_a_kind_draws_what_its_group_would_draw(options: GameOptions, seed: int) -> None:
    """A bot asks a kind of its seat's menu to draw (`GroupKind.draw`) without making the
    group: it must give what the group's candidates give — one `pick` of its `legal` list,
    or for an ability random candidates tried until one is `allowed` — and leave the random
    stream where that leaves it, so bots play exactly the games they played before."""
    game = play_game(options, seed)
    opened = new_game(options, rng_for(seed, 0))
    states = states_along(opened, apply, game.commands, partial(rng_for, seed))
    drawn: set[str] = set()
    for state in states:
        for seat in range(1, options.players + 1):
            player = state.player(seat)
            for kind in seat_menu(state, seat).kinds:
                key = f"{seat}:{state.phase_seq}:{kind.kind}"
                ours, theirs = random.Random(key), random.Random(key)
                group = kind.make(state, player)
                if group is None:
                    expected = None
                elif kind.command is UseAbility:
                    expected = _tried(theirs, group)
                else:
                    legal = list(group.legal())
                    expected = pick(theirs, legal) if legal else None
                assert kind.draw(state, player, ours) == expected, (kind.kind, seat, state.phase)
                assert ours.getstate() == theirs.getstate(), (kind.kind, seat, state.phase)
                if expected is not None:
                    drawn.add(kind.kind)
    assert {"nominate", "vote", "call"} <= drawn
    assert drawn - {"nominate", "vote", "call", "interject", "answer", "hang_up", "toggle"}


@pytest.mark.parametrize(("options", "seed"), GAMES)
def test_the_menu_holds_every_ability_that_is_available(options: GameOptions, seed: int) -> None:
    """A seat's menu (`seat_menu`) leaves out without asking the abilities whose phases are
    not now, and for a seat out of the game every kind the skeleton refuses to it: none of
    those may be accepted, and every available ability of a living seat makes its group."""
    game = play_game(options, seed)
    opened = new_game(options, rng_for(seed, 0))
    states = states_along(opened, apply, game.commands, partial(rng_for, seed))
    available = dead = 0
    for state in states:
        if state.phase is Phase.OVER:
            continue
        for seat in range(1, options.players + 1):
            player = state.player(seat)
            kinds = {group.kind for group in command_groups(state, seat)}
            if not player.alive:
                assert kinds <= {"hang_up"}, kinds
                candidates: list[Command] = [
                    Interject(seat),
                    PlaceCall(seat, seat % options.players + 1),
                ]
                candidates += [UseAbility(seat, a.kind, 1) for a in player.spec.abilities]
                assert all(validate(state, command) is not None for command in candidates)
                dead += 1
                continue
            for ability in player.spec.abilities:
                if ability.available(state, player) is None:
                    assert ability.kind.value in kinds, (ability.kind, state.phase)
                    available += 1
    assert available > 0 and dead > 0
