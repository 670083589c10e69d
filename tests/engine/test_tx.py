"""One draft per command (kit/tx.py) and `evolve` (core.py): the state handed in, a result
handed out and a state assigned from elsewhere are never changed afterwards."""

from __future__ import annotations

import dataclasses
import random
from dataclasses import FrozenInstanceError, dataclass, field

import pytest

from vollmond.engine.core import _KITS, Audience, Event, builder, evolve, evolve_with
from vollmond.engine.kit.tx import Tx


@dataclass(frozen=True, slots=True)
class _Seat:
    seat: int
    alive: bool = True


@dataclass(frozen=True, slots=True)
class _State:
    players: tuple[_Seat, ...]
    round: int = 1
    phase: str = "night"
    notes: dict[int, str] = field(default_factory=dict)


def _state() -> _State:
    return _State((_Seat(1), _Seat(2), _Seat(3)))


def test_evolve_copies_with_the_changes_and_leaves_the_original() -> None:
    before = _State((_Seat(1),), notes={1: "a"})
    after = evolve(before, round=2)
    assert after == _State((_Seat(1),), round=2, notes={1: "a"})
    assert before.round == 1
    assert after is not before


def test_evolve_refuses_a_name_that_is_not_a_field() -> None:
    with pytest.raises(TypeError, match="rounds"):
        evolve(_state(), rounds=2)


def test_evolve_with_takes_the_changes_as_a_mapping() -> None:
    before = _state()
    after = evolve_with(before, {"round": 2, "phase": "day"})
    assert (
        after
        == evolve(before, round=2, phase="day")
        == dataclasses.replace(before, round=2, phase="day")
    )
    assert before == _state()
    with pytest.raises(TypeError, match="rounds"):
        evolve_with(before, {"round": 3, "rounds": 2})


@dataclass(frozen=True)
class _Unslotted:
    name: str
    count: int = 0


def test_evolve_sets_fields_without_slots_too() -> None:
    """Slotted fields are set through their slots; a class without slots by name."""
    before = _Unslotted("a")
    after = evolve(before, count=3)
    assert (after, before) == (_Unslotted("a", 3), _Unslotted("a"))
    with pytest.raises(TypeError, match="size"):
        evolve(before, size=1)


def test_a_builder_makes_what_the_constructor_makes() -> None:
    made = builder(_State)((_Seat(1),), 2, "day", {1: "a"})
    assert made == _State((_Seat(1),), round=2, phase="day", notes={1: "a"})
    assert type(made) is _State
    with pytest.raises(FrozenInstanceError):
        made.round = 3  # type: ignore[misc]
    event = builder(Event)("code", Audience.to(2), {"x": 1})
    assert event == Event("code", Audience.to(2), {"x": 1})


@dataclass(frozen=True, slots=True)
class _Checked:
    count: int

    def __post_init__(self) -> None:
        if self.count < 0:
            raise ValueError("count")


def test_no_builder_for_a_class_whose_init_checks() -> None:
    with pytest.raises(TypeError, match="__post_init__"):
        builder(_Checked)


def test_a_draft_refuses_a_name_that_is_not_a_field() -> None:
    tx: Tx[_State, object] = Tx(_state(), random.Random(0))
    tx.change(round=2)
    with pytest.raises(TypeError, match="rounds"):
        tx.change(rounds=3)


def test_the_first_change_copies_and_later_ones_write_into_the_copy() -> None:
    handed_in = _state()
    tx: Tx[_State, object] = Tx(handed_in, random.Random(0))
    tx.change(round=2)
    draft = tx.state
    tx.change(phase="day")
    tx.put_player(_Seat(2, alive=False))
    assert tx.state is draft
    assert (draft.round, draft.phase, draft.players[1].alive) == (2, "day", False)
    assert handed_in == _state()


def test_a_result_is_frozen_a_later_change_copies_it() -> None:
    tx: Tx[_State, object] = Tx(_state(), random.Random(0))
    tx.change(round=2)
    result = tx.result().state
    tx.change(round=3)
    assert result.round == 2
    assert tx.state.round == 3


def test_an_assigned_state_is_not_written_into() -> None:
    shared = _state()
    tx: Tx[_State, object] = Tx(_state(), random.Random(0))
    tx.change(round=2)
    tx.state = shared
    tx.change(round=5)
    assert shared.round == 1
    assert tx.state.round == 5


def test_evolve_and_builders_hand_out_frozen_values_of_the_class_itself() -> None:
    """The twin a value is written through (core._thawed) never leaves: what evolve and a
    builder give is an instance of the class, frozen, equal to what the constructor makes."""
    before = _state()
    after = evolve(before, round=3)
    built = builder(_State)((_Seat(1),), 2, "day", {})
    for value in (after, built):
        assert type(value) is _State
        with pytest.raises(FrozenInstanceError):
            value.round = 4  # type: ignore[misc]
    assert after == dataclasses.replace(before, round=3)


@dataclass(frozen=True, slots=True)
class _Base:
    seat: int


@dataclass(frozen=True, slots=True)
class _Derived(_Base):
    """Fields over two classes' slots: no twin of one layout, the slots' setters instead."""

    note: str = ""


def test_evolve_without_a_twin_uses_the_slots_setters() -> None:
    after = evolve(_Derived(1, "a"), note="b")
    assert (type(after), after) == (_Derived, _Derived(1, "b"))
    assert _KITS[_Derived].thawed is None
    assert _KITS[_State].thawed is not None
