"""The mayor rule set's entry points: deal and open a game, validate and apply a command.

>>> import random
>>> from vollmond.engine.mayor.options import MayorOptions
>>> result = new_game(MayorOptions(players=6), random.Random(1))
>>> result.state.stage.value, len(result.state.players)
('candidacy', 6)
"""

from __future__ import annotations

from vollmond.engine.core import Audience, Rejection, Result, Rng
from vollmond.engine.kit.handlers import Handler, HandlerTable, Refusals
from vollmond.engine.mayor import chat, election, floors, leaving, night, trial, voting
from vollmond.engine.mayor.codes import Ev, Rej
from vollmond.engine.mayor.commands import (
    Accuse,
    ChooseVictim,
    Command,
    FloorTimeout,
    Leave,
    PhaseTimeout,
    Say,
    Stand,
    TimerCommand,
    Vote,
    YieldFloor,
)
from vollmond.engine.mayor.options import InvalidOptionsError, MayorOptions
from vollmond.engine.mayor.phases import advance_if_complete, begin, end_stage
from vollmond.engine.mayor.roles.registry import EVIL_ROLE, GOOD_ROLE, ROLES
from vollmond.engine.mayor.state import MayorState, Player
from vollmond.engine.mayor.tx import Tx
from vollmond.engine.mayor.victory import settle

MayorResult = Result[MayorState, TimerCommand]


def deal(options: MayorOptions, rng: Rng) -> tuple[tuple[str, ...], frozenset[int]]:
    """Role ids shuffled onto seats, and the lovers (two random seats) if the option is on."""
    options.check()
    nazis = options.nazi_count
    cards = [EVIL_ROLE.id] * nazis + [GOOD_ROLE.id] * (options.players - nazis)
    rng.shuffle(cards)
    seats = list(range(1, options.players + 1))
    lovers = frozenset(rng.sample(seats, 2)) if options.lovers else frozenset()
    return tuple(cards), lovers


def new_game(options: MayorOptions, rng: Rng) -> MayorResult:
    """Deal (an event, so replay never re-rolls) and open the mayor election."""
    roles, lovers = deal(options, rng)
    return start_with_roles(options, roles, lovers, rng)


def start_with_roles(
    options: MayorOptions, roles: tuple[str, ...], lovers: frozenset[int], rng: Rng
) -> MayorResult:
    """Open a game with a given deal (seat i gets roles[i-1]): scenarios, golden games."""
    options.check()
    if len(roles) != options.players or any(r not in ROLES for r in roles):
        raise InvalidOptionsError("one known role per seat")
    if lovers and (len(lovers) != 2 or not all(1 <= s <= options.players for s in lovers)):
        raise InvalidOptionsError("lovers are two seats")
    players = tuple(
        Player(seat, ROLES[role], lover=seat in lovers) for seat, role in enumerate(roles, 1)
    )
    tx = Tx(MayorState(options, players), rng)
    nazis = sum(1 for p in players if p.role.night_room)
    tx.emit(
        Ev.GAME_STARTED,
        Audience.public(),
        world=options.world,
        players=options.players,
        nazis=nazis,
        pairs=1 if lovers else 0,
    )
    tx.emit(
        Ev.ROLES_DEALT,
        Audience.system(),
        roles={str(p.seat): p.role.id for p in players},
        lovers=sorted(lovers),
    )
    for player in players:
        tx.emit(Ev.ROLE_ASSIGNED, Audience.to(player.seat), role=player.role.id)
    if not settle(tx):
        begin(tx)
    return tx.result()


# --- commands ------------------------------------------------------------------------------


def _check_phase_timeout(state: MayorState, cmd: PhaseTimeout) -> Rejection | None:
    if cmd.phase_seq != state.phase_seq:
        return Rejection(Rej.STALE_TIMER)
    return None


def _phase_timeout(tx: Tx, cmd: PhaseTimeout) -> None:
    end_stage(tx)


_HANDLERS: dict[type, Handler[MayorState, Tx]] = {
    Stand: Handler(election.check_stand, election.stand),
    Vote: Handler(voting.check_vote, voting.vote),
    Accuse: Handler(trial.check_accuse, trial.accuse),
    ChooseVictim: Handler(night.check_choose, night.choose),
    YieldFloor: Handler(floors.check_yield, floors.yield_floor),
    Say: Handler(chat.check_say, chat.say, needs_living_actor=False),
    Leave: Handler(leaving.check_leave, leaving.leave),
    PhaseTimeout: Handler(_check_phase_timeout, _phase_timeout, timer=True),
    FloorTimeout: Handler(floors.check_timeout, floors.timeout, timer=True),
}


def _screen_target(state: MayorState, command: object) -> Rejection | None:
    """A target, where a command has one, is a seat number (never a bool)."""
    target = getattr(command, "target", 0)
    if not isinstance(target, int) or isinstance(target, bool):
        return Rejection(Rej.TARGET_UNKNOWN, {"target": None})
    return None


def _after(tx: Tx) -> None:
    """The flow after every accepted command: settle victory, else end the stage if it is
    complete."""
    if not settle(tx):
        advance_if_complete(tx)


_TABLE = HandlerTable(
    _HANDLERS,
    Refusals(Rej.NOT_A_PLAYER, Rej.GAME_OVER, Rej.ACTOR_OUT),
    is_over=lambda state: state.is_over,
    open_tx=Tx,
    after=_after,
    screen=_screen_target,
)


def validate(state: MayorState, command: Command) -> Rejection | None:
    """Why `command` would be refused now, or None if `apply` would accept it."""
    return _TABLE.validate(state, command)


def apply(state: MayorState, command: Command, rng: Rng) -> MayorResult | Rejection:
    """Validate, then change: a rejection leaves `state` exactly as it was."""
    tx = _TABLE.run(state, command, rng)
    return tx if isinstance(tx, Rejection) else tx.result()
