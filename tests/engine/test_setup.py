"""Founding a game: worlds (W1), house numbers (W2), options (W3), decks (W4, W5, W8),
the unanimous and instant-kill options (W6, W7), and options that cannot make a game."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace

import pytest

from tests.scenario import Scenario
from vollmond.engine.core import AudienceKind, Event, Rejection, Viewer
from vollmond.engine.standard import (
    ActionKind,
    CallSettings,
    Command,
    DayCallModes,
    DeckId,
    GameOptions,
    GameState,
    InvalidOptionsError,
    PhaseTimeout,
    RoleId,
    UseAbility,
    apply,
    new_game,
)
from vollmond.engine.standard.codes import Ev
from vollmond.engine.standard.decks import FIXED_DECKS
from vollmond.engine.standard.legal import legal_actions
from vollmond.engine.standard.types import Phase
from vollmond.engine.standard.view import view
from vollmond.worlds import world_ids

R = RoleId


def roles_of(state: GameState) -> Counter[str]:
    return Counter(p.role.value for p in state.players)


def counts(**roles: int) -> Counter[str]:
    return Counter({role: n for role, n in roles.items() if n})


class Table:
    """A game founded with `new_game`, driven command by command."""

    def __init__(self, options: GameOptions, seed: int = 1) -> None:
        self.rng = random.Random(seed)
        result = new_game(options, self.rng)
        self.state = result.state
        self.events: list[Event] = list(result.events)

    def send(self, command: Command) -> Rejection | None:
        outcome = apply(self.state, command, self.rng)
        if isinstance(outcome, Rejection):
            return outcome
        self.state = outcome.state
        self.events.extend(outcome.events)
        return None

    def do(self, command: Command) -> None:
        refused = self.send(command)
        assert refused is None, f"{command} refused: {refused}"

    def timeout(self) -> None:
        self.do(PhaseTimeout(self.state.phase_seq))

    def started(self) -> Event:
        return next(e for e in self.events if e.code == Ev.GAME_STARTED)


def play_randomly(options: GameOptions, seed: int, max_steps: int = 3000) -> Table:
    """Random legal play, every choice drawn from one seeded stream; ends when the game does."""
    table = Table(options, seed)
    chooser = random.Random(f"chooser:{seed}")
    for _ in range(max_steps):
        if table.state.phase is Phase.OVER:
            return table
        moves = [c for p in table.state.living() for c in legal_actions(table.state, p.seat)]
        if not moves or chooser.random() < 0.15:
            table.timeout()
        else:
            table.do(chooser.choice(moves))
    raise AssertionError("the game did not end")


# --- W1: ten worlds, one rule set --------------------------------------------------------


def _without_world(events: list[Event]) -> list[Event]:
    return [
        Event(e.code, e.audience, {k: v for k, v in e.params.items() if k != "world"})
        if e.code == Ev.GAME_STARTED
        else e
        for e in events
    ]


@pytest.mark.rule("W1")
def test_every_world_plays_by_the_same_rules() -> None:
    ids = world_ids()
    assert len(ids) == 10
    for seed in (3, 11):
        base_options = GameOptions(players=9, deck=DeckId.AUTO, instant_kill=True)
        base = play_randomly(replace(base_options, world=ids[0]), seed)
        assert base.state.phase is Phase.OVER
        for world in ids[1:]:
            other = play_randomly(replace(base_options, world=world), seed)
            assert other.started().params["world"] == world
            assert other.state.options.world == world
            # Same seed: same deal, same game, same outcome — only the world's name differs.
            assert _without_world(other.events) == _without_world(base.events)
            assert replace(other.state, options=base.state.options) == base.state


@pytest.mark.rule("W1")
def test_every_world_deals_every_fixed_deck_alike() -> None:
    for deck, fixed in FIXED_DECKS.items():
        options = GameOptions(players=fixed.size, deck=deck)
        deals = {
            world: tuple(p.role for p in Table(replace(options, world=world), 5).state.players)
            for world in world_ids()
        }
        assert len(set(deals.values())) == 1, deck


# --- W2: house numbers ------------------------------------------------------------------


@pytest.mark.rule("W2", "S14")
def test_house_numbers_stay_fixed_through_a_vagabond_steal() -> None:
    g = Scenario("vagabond evil seer filler filler filler")
    before = [p.seat for p in g.state.players]
    g.run("steal 1 -> 3")
    assert [p.seat for p in g.state.players] == before == [1, 2, 3, 4, 5, 6]
    # The roles moved, the numbers did not: house 1 is now the seer, house 3 a filler.
    assert g.role(1) is R.SEER and g.role(3) is R.FILLER
    assert g.view(3)["me"]["seat"] == 3
    g.run("check 1 -> 2")
    assert g.last(Ev.CHECK_RESULT).params == {"target": 2, "evil": True}
    g.run("evil 2 -> 3; timeout")
    assert g.last(Ev.MORNING_REPORT).params["dead"] == [{"seat": 3, "role": "filler"}]
    assert [s["seat"] for s in g.view(4)["seats"]] == [1, 2, 3, 4, 5, 6]


@pytest.mark.rule("W2")
def test_seats_are_numbered_one_to_n_in_every_view() -> None:
    table = Table(GameOptions(players=11))
    for viewer in (Viewer.player(1), Viewer.player(11), Viewer.spectator(), Viewer.operator()):
        seats = view(table.state, viewer)["seats"]
        assert isinstance(seats, list)
        assert [s["seat"] for s in seats] == list(range(1, 12))


# --- W3: founding options -----------------------------------------------------------------


@pytest.mark.rule("W3", "W6", "W7")
def test_founding_options_land_in_state_and_in_game_started() -> None:
    calls = CallSettings(
        enabled=True, max_duration_s=90.0, per_night=2, by_day=True, day_modes=DayCallModes.HALB
    )
    options = GameOptions(
        players=9,
        world="vampir",
        deck=DeckId.MAY_DANCE,
        unanimous=True,
        instant_kill=True,
        calls=calls,
    )
    table = Table(options)
    assert table.state.options == options
    started = table.started()
    assert started.audience.kind is AudienceKind.PUBLIC
    assert started.params["world"] == "vampir"
    assert started.params["players"] == 9
    assert started.params["deck"] == "may_dance"
    assert started.params["unanimous"] is True
    assert started.params["instant_kill"] is True
    assert started.params["lovers"] is True  # the Maitanz deck brings the lovers
    assert started.params["composition"] == {
        "doctor": 1,
        "evil": 2,
        "filler": 4,
        "seer": 1,
        "trapper": 1,
    }
    public = view(table.state, Viewer.spectator())
    assert public["world"] == "vampir"
    assert public["options"] == options.to_json()
    assert options.to_json()["calls"] == {
        "enabled": True,
        "max_duration_s": 90.0,
        "per_night": 2,
        "by_day": True,
        "day_modes": "halb",
        "evil_may_call": True,
        "ring_s": 20.0,
    }


@pytest.mark.rule("W3", "S11")
def test_lovers_option_overrides_the_deck() -> None:
    with_lovers = Table(GameOptions(players=8, lovers=True))
    assert sum(p.lover for p in with_lovers.state.players) == 2
    assert with_lovers.started().params["lovers"] is True
    without = Table(GameOptions(players=9, deck=DeckId.MAY_DANCE, lovers=False))
    assert not any(p.lover for p in without.state.players)
    assert without.started().params["lovers"] is False
    plain = Table(GameOptions(players=8))
    assert not any(p.lover for p in plain.state.players)


@pytest.mark.rule("W3")
def test_the_deal_is_an_event_only_the_log_sees() -> None:
    table = Table(GameOptions(players=8))
    dealt = next(e for e in table.events if e.code == Ev.ROLES_DEALT)
    assert dealt.audience.kind is AudienceKind.SYSTEM
    assert dealt.params["roles"] == {str(p.seat): p.role.value for p in table.state.players}
    for seat in range(1, 9):
        assert not dealt.audience.includes(Viewer.player(seat))
        mine = [e for e in table.events if e.code == Ev.ROLE_ASSIGNED]
        assert [e.params["role"] for e in mine if e.audience.includes(Viewer.player(seat))] == [
            table.state.player(seat).role.value
        ]


# --- W4: the decks -------------------------------------------------------------------------

FIXED = {
    DeckId.STARTER: (7, counts(evil=2, seer=1, knight=1, twin=2, vote_giver=1)),
    DeckId.LONER: (8, counts(evil=2, seer=1, fox=1, doctor=1, hunter=1, filler=2)),
    DeckId.FULL_MOON: (9, counts(evil=2, seer=1, hunter=1, necromancer=1, doctor=1, filler=3)),
    DeckId.MAY_DANCE: (9, counts(evil=2, seer=1, trapper=1, doctor=1, filler=4)),
    DeckId.CAULDRON: (10, counts(evil=2, seer=1, witch=1, defector=1, doctor=1, filler=4)),
    DeckId.TRIBUNAL: (
        13,
        counts(
            evil=4, seer=1, doctor=1, witch=1, hunter=1, knight=1, medium=1, trapper=1,
            princess=1, vote_giver=1,
        ),
    ),
}  # fmt: skip


@pytest.mark.rule("W4")
@pytest.mark.parametrize("deck", list(FIXED))
def test_fixed_deck_size_and_composition(deck: DeckId) -> None:
    size, composition = FIXED[deck]
    assert FIXED_DECKS[deck].size == size
    assert Counter(r.value for r in FIXED_DECKS[deck].cards) == composition
    for seed in (1, 2, 3):
        table = Table(GameOptions(players=size, deck=deck), seed)
        assert roles_of(table.state) == composition
        assert table.started().params["composition"] == dict(sorted(composition.items()))
        assert table.started().params["deck"] == deck.value
        lovers = sum(p.lover for p in table.state.players)
        assert lovers == (2 if deck is DeckId.MAY_DANCE else 0)


@pytest.mark.rule("W4")
def test_every_deck_id_is_covered() -> None:
    assert set(FIXED) | {DeckId.AUTO, DeckId.CUSTOM} == set(DeckId)
    assert set(FIXED_DECKS) == set(FIXED)


@pytest.mark.rule("W4")
def test_the_deal_is_shuffled_onto_seats() -> None:
    deals = {
        tuple(p.role for p in Table(GameOptions(players=13, deck=DeckId.TRIBUNAL), s).state.players)
        for s in range(8)
    }
    assert len(deals) > 1


@pytest.mark.rule("W4")
def test_custom_deck_deals_exactly_the_founders_roles() -> None:
    custom = ((R.EVIL, 2), (R.WITCH, 1), (R.FOX, 1), (R.PRINCESS, 1), (R.CREEPER, 1))
    table = Table(GameOptions(players=6, deck=DeckId.CUSTOM, custom_roles=custom))
    assert roles_of(table.state) == counts(evil=2, witch=1, fox=1, princess=1, creeper=1)
    assert table.started().params["deck"] == "custom"


# --- W5: the automatic deck ------------------------------------------------------------------


def expected_auto(n: int) -> Counter[str]:
    evil = max(1, n // 4)
    seer = (n >= 4) + (n >= 16)
    doctor = (n >= 5) + (n >= 20)
    witch, hunter, owl = int(n >= 6), int(n >= 7), int(n >= 8)
    filler = n - evil - seer - doctor - witch - hunter - owl
    return counts(
        evil=evil, seer=seer, doctor=doctor, witch=witch, hunter=hunter, night_owl=owl,
        filler=filler,
    )  # fmt: skip


@pytest.mark.rule("W5")
def test_auto_deck_hand_checked_sizes() -> None:
    assert expected_auto(4) == counts(evil=1, seer=1, filler=2)
    assert expected_auto(7) == counts(evil=1, seer=1, doctor=1, witch=1, hunter=1, filler=2)
    assert expected_auto(8) == counts(
        evil=2, seer=1, doctor=1, witch=1, hunter=1, night_owl=1, filler=1
    )
    assert expected_auto(16) == counts(
        evil=4, seer=2, doctor=1, witch=1, hunter=1, night_owl=1, filler=6
    )
    assert expected_auto(20) == counts(
        evil=5, seer=2, doctor=2, witch=1, hunter=1, night_owl=1, filler=8
    )


@pytest.mark.rule("W5")
@pytest.mark.parametrize("players", range(4, 41))
def test_auto_deck_grows_with_the_table(players: int) -> None:
    table = Table(GameOptions(players=players), seed=players)
    dealt = roles_of(table.state)
    assert dealt == expected_auto(players)
    assert sum(dealt.values()) == players
    assert dealt["evil"] >= (2 if players >= 8 else 1)
    # About one in four is evil.
    assert players / 4 - 1 < dealt["evil"] <= players / 4 + 0.75


# --- W6: einstimmig -----------------------------------------------------------------------


@pytest.mark.rule("W6", "N6")
def test_unanimous_option_is_chosen_at_founding_and_applies() -> None:
    split = "evil 1 -> 4; evil 2 -> 5; timeout"
    g = Scenario("evil evil seer filler filler filler filler", unanimous=True)
    assert g.last(Ev.GAME_STARTED).params["unanimous"] is True
    g.run(split)
    assert g.dead == set()
    g = Scenario("evil evil seer filler filler filler filler")
    assert g.last(Ev.GAME_STARTED).params["unanimous"] is False
    g.run(split)
    assert len(g.dead & {4, 5}) == 1


# --- W7: Sofort-Mord with every deck --------------------------------------------------------

ALL_DECKS = [
    (DeckId.AUTO, 9, ()),
    *[(deck, fixed.size, ()) for deck, fixed in FIXED_DECKS.items()],
    (DeckId.CUSTOM, 6, ((R.EVIL, 2), (R.SEER, 1), (R.FILLER, 3))),
]


@pytest.mark.rule("W7", "S18")
@pytest.mark.parametrize(("deck", "players", "custom"), ALL_DECKS)
def test_instant_kill_is_selectable_with_every_deck(
    deck: DeckId, players: int, custom: tuple[tuple[RoleId, int], ...]
) -> None:
    for world in ("werwolf", "mafia", "bunker13"):
        options = GameOptions(
            players=players, world=world, deck=deck, custom_roles=custom, instant_kill=True
        )
        table = Table(options)
        assert table.started().params["instant_kill"] is True
        table.timeout()  # a quiet night
        assert table.state.phase is Phase.MORNING
        killer = next(p.seat for p in table.state.players if p.role is R.EVIL)
        target = next(p.seat for p in table.state.players if p.role is R.SEER)
        table.do(UseAbility(killer, ActionKind.INSTANT_KILL, target))
        assert not table.state.player(target).alive
        assert table.events[-1].code in (Ev.INSTANT_KILL, Ev.GAME_OVER)


# --- W8: fitting a deck to the table ---------------------------------------------------------


@pytest.mark.rule("W8")
def test_deck_is_filled_with_the_filler_role() -> None:
    table = Table(GameOptions(players=10, deck=DeckId.STARTER))
    assert roles_of(table.state) == counts(evil=2, seer=1, knight=1, twin=2, vote_giver=1, filler=3)


@pytest.mark.rule("W8", "S10")
def test_deck_is_cut_from_the_back_and_twins_stay_in_pairs() -> None:
    # Starter: evil, evil, seer, knight, twin, twin, vote-giver.
    # A cut keeps evil at most max(1, (players - 1) // 3): one evil card at 5 and 6 players.
    six = Table(GameOptions(players=6, deck=DeckId.STARTER))
    assert roles_of(six.state) == counts(evil=1, seer=1, knight=1, twin=2, filler=1)
    five = Table(GameOptions(players=5, deck=DeckId.STARTER))
    # Cut to five, one twin would be left alone: he becomes a filler.
    assert roles_of(five.state) == counts(evil=1, seer=1, knight=1, filler=2)
    cauldron = Table(GameOptions(players=7, deck=DeckId.CAULDRON))
    assert roles_of(cauldron.state) == counts(
        evil=2, seer=1, witch=1, defector=1, doctor=1, filler=1
    )


@pytest.mark.rule("W8")
def test_at_least_one_evil_stays() -> None:
    no_evil = ((R.SEER, 1), (R.DOCTOR, 1), (R.FILLER, 3))
    table = Table(GameOptions(players=5, deck=DeckId.CUSTOM, custom_roles=no_evil))
    assert roles_of(table.state) == counts(evil=1, seer=1, doctor=1, filler=2)
    # The defector does not count as evil (S12): an evil card is still added.
    defector_only = ((R.DEFECTOR, 1), (R.SEER, 1), (R.FILLER, 2))
    table = Table(GameOptions(players=4, deck=DeckId.CUSTOM, custom_roles=defector_only))
    assert roles_of(table.state) == counts(evil=1, defector=1, seer=1, filler=1)
    # Evil listed last and cut away: the last card becomes evil again.
    cut = ((R.SEER, 1), (R.DOCTOR, 1), (R.FILLER, 2), (R.EVIL, 1))
    table = Table(GameOptions(players=4, deck=DeckId.CUSTOM, custom_roles=cut))
    assert roles_of(table.state) == counts(evil=1, seer=1, doctor=1, filler=1)


@pytest.mark.rule("W8", "S10")
def test_custom_twins_only_in_pairs_even_when_evil_must_be_added() -> None:
    odd = ((R.EVIL, 1), (R.TWIN, 3))
    table = Table(GameOptions(players=4, deck=DeckId.CUSTOM, custom_roles=odd))
    assert roles_of(table.state) == counts(evil=1, twin=2, filler=1)
    only_twins = ((R.TWIN, 4),)
    table = Table(GameOptions(players=4, deck=DeckId.CUSTOM, custom_roles=only_twins))
    assert roles_of(table.state) == counts(evil=1, twin=2, filler=1)
    twins_then_filled = ((R.TWIN, 2),)
    table = Table(GameOptions(players=5, deck=DeckId.CUSTOM, custom_roles=twins_then_filled))
    dealt = roles_of(table.state)
    assert dealt == counts(evil=1, twin=2, filler=2)


@pytest.mark.rule("W8")
def test_custom_deck_is_filled_and_cut_too() -> None:
    short = ((R.EVIL, 1), (R.SEER, 1))
    table = Table(GameOptions(players=7, deck=DeckId.CUSTOM, custom_roles=short))
    assert roles_of(table.state) == counts(evil=1, seer=1, filler=5)
    long = ((R.EVIL, 2), (R.SEER, 1), (R.WITCH, 1), (R.HUNTER, 1), (R.FOX, 1))
    table = Table(GameOptions(players=4, deck=DeckId.CUSTOM, custom_roles=long))
    assert roles_of(table.state) == counts(evil=1, seer=1, witch=1, filler=1)
    # Not cut, the founder's choice stands, however many evil it lists.
    exact = ((R.EVIL, 2), (R.SEER, 1), (R.WITCH, 1))
    table = Table(GameOptions(players=4, deck=DeckId.CUSTOM, custom_roles=exact))
    assert roles_of(table.state) == counts(evil=2, seer=1, witch=1)


@pytest.mark.rule("W8")
@pytest.mark.parametrize("deck", [d for d in DeckId if d not in (DeckId.AUTO, DeckId.CUSTOM)])
def test_a_cut_deck_never_hands_evil_a_majority(deck: DeckId) -> None:
    for players in range(4, 13):
        table = Table(GameOptions(players=players, deck=deck))
        evil = roles_of(table.state)["evil"]
        assert evil >= 1
        assert evil * 2 < players, (deck, players, evil)


@pytest.mark.rule("P1")
@pytest.mark.parametrize("deck", [d for d in DeckId if d is not DeckId.CUSTOM])
def test_every_deck_deals_a_public_table_of_200(deck: DeckId) -> None:
    """P1: public games have no size limit in the rules; the engine deals up to 200 seats
    (benchmarks/big_game.py measures such a game); the operators' policy sets the bound a
    service offers (60 by default, docs/decisions.md)."""
    table = Table(GameOptions(players=200, deck=deck))
    evil = roles_of(table.state)["evil"]
    assert len(table.state.players) == 200
    assert evil >= 1 and evil * 2 < 200


# --- Options that cannot make a game ------------------------------------------------------


@pytest.mark.rule("W3")
@pytest.mark.parametrize(
    "options",
    [
        GameOptions(players=3),
        GameOptions(players=201),
        GameOptions(players=0),
        GameOptions(players=8, deck=DeckId.CUSTOM),
        GameOptions(players=8, deck=DeckId.CUSTOM, custom_roles=((R.SEER, 0), (R.EVIL, 0))),
        GameOptions(players=3, deck=DeckId.STARTER),
    ],
)
def test_invalid_options_raise(options: GameOptions) -> None:
    with pytest.raises(InvalidOptionsError):
        new_game(options, random.Random(1))


@pytest.mark.rule("W3")
def test_the_size_limits_themselves_are_fine() -> None:
    assert len(Table(GameOptions(players=4)).state.players) == 4
    assert len(Table(GameOptions(players=60)).state.players) == 60
