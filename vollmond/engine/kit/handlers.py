"""The command-handler table and the `validate`/`apply` skeleton every rule set shares.

Each command type maps to a check (never changes anything, so a rejection leaves the state
untouched) and a perform function (changes `tx.state`, emits events). Before a check runs,
the same questions are asked in every rule set: is this a command of the game, is the game
still on (chat stays open after the end), is the actor a seat, and is the actor still in the
game. After a perform, the rule set's own flow (`after`) settles victory and moves on.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from vollmond.engine.core import Rejection, Rng
from vollmond.engine.kit.commands import Say
from vollmond.engine.kit.seats import SeatedState
from vollmond.engine.kit.tx import Tx

S = TypeVar("S", bound=SeatedState)
X = TypeVar("X", bound=Tx[Any, Any])


@dataclass(frozen=True, slots=True)
class Handler(Generic[S, X]):
    """One command type's check and perform. `needs_living_actor` False lets the dead (or
    those out of the game) send it; `timer` marks the runtime's commands, which have no
    actor."""

    check: Callable[[S, Any], Rejection | None]
    perform: Callable[[X, Any], None]
    needs_living_actor: bool = True
    timer: bool = False


@dataclass(frozen=True, slots=True)
class Refusals:
    """The rule set's codes for the common refusals."""

    not_a_player: str
    game_over: str
    actor_out: str


@dataclass(frozen=True, slots=True)
class HandlerTable(Generic[S, X]):
    """A rule set's handlers with the shared skeleton around them.

    - `is_over`: whether the game has ended;
    - `open_tx`: a new transaction on a state;
    - `after`: the rule set's flow after every accepted command;
    - `screen`: a further check for every command after the common ones (optional).
    """

    handlers: Mapping[type, Handler[S, X]]
    refusals: Refusals
    is_over: Callable[[S], bool]
    open_tx: Callable[[S, Rng], X]
    after: Callable[[X], None]
    screen: Callable[[S, object], Rejection | None] | None = None

    def validate(self, state: S, command: object) -> Rejection | None:
        """Why `command` would be refused now, or None if `apply` would accept it."""
        return self._validate(state, command, self.handlers.get(type(command)))

    def _validate(
        self, state: S, command: object, handler: Handler[S, X] | None
    ) -> Rejection | None:
        if handler is None:
            return Rejection(self.refusals.not_a_player)
        if self.is_over(state) and not isinstance(command, Say):
            return Rejection(self.refusals.game_over)
        if not handler.timer:
            actor = getattr(command, "actor", None)
            if type(actor) is not int and (not isinstance(actor, int) or isinstance(actor, bool)):
                return Rejection(self.refusals.not_a_player)  # a plain int asks nothing more
            if not state.has_seat(actor):
                return Rejection(self.refusals.not_a_player)
            if handler.needs_living_actor and not state.player(actor).alive:
                return Rejection(self.refusals.actor_out)
        if self.screen is not None:
            screened = self.screen(state, command)
            if screened is not None:
                return screened
        return handler.check(state, command)

    def needs_living_actor(self, command_type: type) -> bool:
        """Whether commands of this type are refused to an actor out of the game."""
        return self.handlers[command_type].needs_living_actor

    def check_seated(self, state: S, command: object) -> Rejection | None:
        """`validate` without the common questions, for a caller that already knows their
        answers for many candidates at once: a running game, an actor with a seat, alive
        where the command needs it (legal actions, bots). Equal to `validate` then."""
        if self.screen is not None:
            screened = self.screen(state, command)
            if screened is not None:
                return screened
        return self.handlers[type(command)].check(state, command)

    def run(self, state: S, command: object, rng: Rng) -> X | Rejection:
        """Validate, then change: the finished transaction, or the rejection (which leaves
        `state` exactly as it was)."""
        handler = self.handlers.get(type(command))
        refused = self._validate(state, command, handler)
        if refused is not None:
            return refused
        assert handler is not None  # a command without one is refused
        tx = self.open_tx(state, rng)
        handler.perform(tx, command)
        self.after(tx)
        return tx
