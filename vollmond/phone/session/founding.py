"""Founding options by phone: a short guided sequence after the size, with defaults.

A phone founder may choose what a web founder chooses (W3), except the custom deck (web only):
the deck (the seven by name), the founder options W6 (einstimmig), W7 (Sofort-Mord) and S11
(lovers), the call rules C8/C9 (calls by day, the day call mode, no calls at all) and the night
and day lengths. Every step has a default a caller reaches with one key, so "1 für Standard"
right after the size founds a standard round at once; the operators' bounds are checked by the
hub when the round is founded (a refusal is spoken and the size is asked again).
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Any, Final

from vollmond.engine.ruleset import get_ruleset
from vollmond.phone.session.keys import Entry, Hash, Single, Token
from vollmond.worlds import DECK_KEYS, World

if TYPE_CHECKING:
    from vollmond.phone.session.menu import Announcer

STANDARD: Final = "standard"
"""The rule set these steps build options for: its founding options as JSON (the standard
rules' own codec decodes them), so the phone names none of its types."""

DECKS: Final[tuple[str, ...]] = tuple(d for d in DECK_KEYS if d != "custom")
"""The decks a phone founder picks from, by their number (1 = automatic, the default)."""

DAY_MODES: Final[tuple[str, ...]] = ("stumm", "halb", "both")
"""C9's day call modes, by their number (the standard options' JSON values)."""


class Extra(StrEnum):
    """One digit each in the extras step (several may be typed at once: ``14#``)."""

    UNANIMOUS = "1"  # W6
    INSTANT_KILL = "2"  # W7
    LOVERS = "3"  # S11
    CALLS_BY_DAY = "4"  # C8
    NO_CALLS = "5"  # C8


class Step(StrEnum):
    START = "start"  # 1 standard, 2 choose
    DECK = "deck"
    EXTRAS = "extras"
    DAY_MODE = "day_mode"
    NIGHT = "night"
    DAY = "day"


class FoundingSteps:
    """The announcer's founding sequence; one instance per call, restarted per founding."""

    def __init__(self, announcer: Announcer) -> None:
        self.a = announcer
        self.step = Step.START
        self.options: dict[str, Any] = {"players": 5}
        self.world: World | None = None

    def begin(self, size: int, world: World) -> None:
        self.world = world
        self.options = {"players": size, "world": world.id}
        self.step = Step.START
        self._ask()

    async def _found(self) -> None:
        rules = get_ruleset(STANDARD)
        await self.a.found(STANDARD, rules.decode_options(self.options))

    @staticmethod
    def defaults() -> dict[str, Any]:
        """The standard rules' default founding options (for the default lengths spoken)."""
        rules = get_ruleset(STANDARD)
        return rules.encode_options(rules.decode_options({"players": 5}))

    # -- the Mode contract, delegated by the announcer -------------------------------------
    def immediate(self) -> frozenset[str]:
        if self.step is Step.START:
            return frozenset("12")
        if self.step is Step.DAY_MODE:
            return frozenset("123")
        return frozenset()

    def help(self) -> list[str]:
        return [self._question(long=True)]

    async def handle(self, token: Token) -> None:
        choice = _choice(token)
        if choice is None:
            self.a.s.refuse(self.a.s.t("phone.keyerror.not_here"))
            return
        step = self.step
        if step is Step.START:
            if choice == "1":
                await self._found()
            elif choice == "2":
                self._next(Step.DECK)
            else:
                self._wrong(choice)
        elif step is Step.DECK:
            self._deck(choice)
        elif step is Step.EXTRAS:
            self._extras(choice)
        elif step is Step.DAY_MODE:
            self._day_mode(choice)
        else:
            await self._duration(choice)

    # -- the steps -------------------------------------------------------------------------
    def _deck(self, choice: str) -> None:
        n = int(choice) if choice.isdigit() else 0
        if not 1 <= n <= len(DECKS):
            self._wrong(choice)
            return
        self.options["deck"] = DECKS[n - 1]
        self._next(Step.EXTRAS)

    def _extras(self, choice: str) -> None:
        digits = "" if choice == "0" else choice
        known = {e.value for e in Extra}
        if any(d not in known for d in digits) or (
            Extra.NO_CALLS in digits and Extra.CALLS_BY_DAY in digits
        ):
            self._wrong(choice)
            return
        chosen = {Extra(d) for d in digits}
        by_day = Extra.CALLS_BY_DAY in chosen
        self.options.update(
            unanimous=Extra.UNANIMOUS in chosen,
            instant_kill=Extra.INSTANT_KILL in chosen,
            lovers=True if Extra.LOVERS in chosen else None,
            calls={"enabled": Extra.NO_CALLS not in chosen, "by_day": by_day},
        )
        self._next(Step.DAY_MODE if by_day else Step.NIGHT)

    def _day_mode(self, choice: str) -> None:
        n = int(choice) if choice.isdigit() else 0
        if not 1 <= n <= len(DAY_MODES):
            self._wrong(choice)
            return
        self.options["calls"] = {**self.options.get("calls", {}), "day_modes": DAY_MODES[n - 1]}
        self._next(Step.NIGHT)

    async def _duration(self, choice: str) -> None:
        seconds = int(choice)
        bounds = self.a.s.hub.policy.durations
        if seconds and not bounds.min_s <= seconds <= bounds.max_s:
            low, high = int(bounds.min_s), int(bounds.max_s)
            self.a.s.refuse(self.a.s.t("phone.found.duration_bounds", min=low, max=high))
            return
        durations = dict(self.options.get("durations", {}))
        if seconds:
            durations["night_s" if self.step is Step.NIGHT else "day_s"] = float(seconds)
        self.options["durations"] = durations
        if self.step is Step.NIGHT:
            self._next(Step.DAY)
        else:
            await self._found()

    # -- speaking --------------------------------------------------------------------------
    def _next(self, step: Step) -> None:
        self.step = step
        self._ask()

    def _ask(self) -> None:
        self.a.s.say(self.question())

    def question(self) -> str:
        return self._question(long=False)

    def _wrong(self, choice: str) -> None:
        key = "phone.menu.no_choice"
        self.a.s.refuse(self.a.s.t(key, n=choice) if choice.isdigit() else self.a.s.t(key, n="?"))

    def _question(self, *, long: bool) -> str:
        t = self.a.s.t
        suffix = "_long" if long else ""
        defaults = self.defaults()["durations"]
        assert isinstance(defaults, dict)
        if self.step is Step.DECK:
            assert self.world is not None
            world, lang = self.world, self.a.s.lang
            items = [
                t("phone.found.deck_item", n=i, deck=world.deck_name(d, lang))
                for i, d in enumerate(DECKS, start=1)
            ]
            return t(f"phone.found.deck{suffix}", list="; ".join(items))
        if self.step is Step.NIGHT:
            return t(f"phone.found.night{suffix}", n=int(defaults["night_s"]))
        if self.step is Step.DAY:
            return t(f"phone.found.day{suffix}", n=int(defaults["day_s"]))
        return t(f"phone.found.{self.step.value}{suffix}")


def _choice(token: Token) -> str | None:
    if isinstance(token, Entry):
        return token.digits
    if isinstance(token, Single):
        return token.key
    if isinstance(token, Hash):
        return "0"
    return None
