"""The key grammar (docs/phone-keys.md) without a session: tokens from key streams."""

from __future__ import annotations

import pytest

from vollmond.phone.session.keys import BadKeys, Entry, Hash, Info, KeyParser, Single, Star, Token


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def feed(parser: KeyParser, keys: str) -> list[Token]:
    out: list[Token] = []
    for key in keys:
        out.extend(parser.feed(key))
    return out


@pytest.mark.parametrize(
    ("keys", "token"),
    [
        ("5#", Entry("5")),
        ("05#", Entry("05")),
        ("12#", Entry("12")),
        ("0#", Entry("0")),
        ("00#", Entry("00")),
        ("*05#", Star("05")),
        ("*012#", Star("012")),
        ("*0#", Star("0")),
        ("*0*", Star("0", end="*")),
        ("*9#", Star("9")),
        ("*9105#", Star("9105")),
        ("*#", Star("")),
        ("*7#", Star("7")),
        ("**9#", Star("*9")),
        ("#1", Info("1")),
        ("#9", Info("9")),
        ("##", Hash()),
        ("*5*", BadKeys("misplaced_star", "*5*")),
        ("5*", BadKeys("star_after_digits", "5*")),
        ("#*", BadKeys("star_after_hash", "#*")),
        ("*5*#", BadKeys("misplaced_star", "*5*")),
    ],
)
@pytest.mark.rule("C1", "C4", "C9", "O1", "S19", "D3")
def test_key_sequences(keys: str, token: Token) -> None:
    parser = KeyParser()
    assert feed(parser, keys)[0] == token
    assert parser.buffer in ("", "#")


def test_05_is_house_5_and_the_number_ignores_the_leading_zero() -> None:
    assert Entry("05").number == 5


@pytest.mark.rule("D3")
def test_a_pause_completes_digits_so_a_lone_zero_abstains() -> None:
    clock = Clock()
    parser = KeyParser(timeout_s=3.0, clock=clock)
    assert parser.feed("0") == []
    assert parser.deadline == 103.0
    clock.now = 102.9
    assert parser.expire() == []
    clock.now = 103.0
    assert parser.expire() == [Entry("0", confirmed=False)]
    assert parser.buffer == ""
    # "0" then "5" within the pause: house 5, not an abstention.
    parser.feed("0")
    clock.now = 104.0
    assert parser.feed("5") == []
    clock.now = 106.5
    assert parser.expire() == []
    assert parser.feed("#") == [Entry("05")]


def test_a_pause_after_hash_means_nobody_and_cuts_off_star_commands() -> None:
    clock = Clock()
    parser = KeyParser(timeout_s=1.0, clock=clock)
    parser.feed("#")
    clock.now += 1.0
    assert parser.expire() == [Hash()]
    parser.feed("*")
    parser.feed("0")
    clock.now += 1.0
    assert parser.expire() == [BadKeys("incomplete", "*0")]


@pytest.mark.rule("C2", "C4")
def test_immediate_keys_while_ringing_and_hash_in_a_call() -> None:
    parser = KeyParser()
    parser.immediate = frozenset("12")
    assert parser.feed("1") == [Single("1")]
    assert parser.feed("2") == [Single("2")]
    assert feed(parser, "*03#") == [Star("03")]  # an immediate key is only a first key
    parser.hash_immediate = True
    assert parser.feed("#") == [Hash()]
    parser.immediate = frozenset()
    parser.hash_immediate = False
    assert parser.feed("#") == []


def test_too_many_keys_and_unknown_keys() -> None:
    clock = Clock()
    parser = KeyParser(max_len=5, clock=clock)
    assert feed(parser, "123456") == [BadKeys("too_long", "123456")]
    clock.now += 1.5
    assert parser.feed("A") == [BadKeys("unknown_key", "A")]
    assert parser.buffer == ""


@pytest.mark.rule("S19")
def test_star_hash_interjects_only_as_a_whole_token_not_inside_a_flood() -> None:
    clock = Clock()
    parser = KeyParser(clock=clock)
    tokens = []
    for key in "*****#*#**#":  # a flood: the first error drops the rest of the burst
        clock.now += 0.05
        tokens.extend(parser.feed(key))
    assert tokens == [BadKeys("misplaced_star", "***")]
    assert parser.buffer == ""
    clock.now += 1.5  # a pause: the next keys are a command of their own
    assert feed(parser, "*#") == [Star("")]
