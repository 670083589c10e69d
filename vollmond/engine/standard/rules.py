"""The standard rule set's entry points: found a game, apply a command.

>>> import random
>>> from vollmond.engine.standard import GameOptions, new_game
>>> result = new_game(GameOptions(players=8), random.Random(1))
>>> result.state.phase.value, len(result.state.players)
('night', 8)
"""

from __future__ import annotations

from collections.abc import Callable

from vollmond.engine.core import Audience, Rejection, Result, Rng, builder
from vollmond.engine.kit.handlers import Handler, HandlerTable, Refusals
from vollmond.engine.standard import calls, chat, day, leaving
from vollmond.engine.standard.abilities.base import reject
from vollmond.engine.standard.codes import Ev, Rej
from vollmond.engine.standard.commands import (
    AnswerCall,
    CallTimeout,
    Command,
    FloorTimeout,
    HangUp,
    Interject,
    Leave,
    Nominate,
    PhaseTimeout,
    PlaceCall,
    Say,
    TimerCommand,
    ToggleCallMode,
    UseAbility,
    Vote,
)
from vollmond.engine.standard.decks import deal_cards
from vollmond.engine.standard.options import MAX_PLAYERS, MIN_PLAYERS, GameOptions
from vollmond.engine.standard.phases import (
    advance_if_complete,
    begin,
    first_stage,
    on_timeout,
    reveal_bonds,
)
from vollmond.engine.standard.properties import spec_of
from vollmond.engine.standard.roles.registry import ROLES
from vollmond.engine.standard.state import GameState, Player, RoleState
from vollmond.engine.standard.tx import Tx
from vollmond.engine.standard.types import ActionKind, DeckId, Phase, RoleId
from vollmond.engine.standard.victory import settle

StdResult = Result[GameState, TimerCommand]

# Members read on every command, as module constants (types.py: `Phase.NIGHT` is slow on 3.11).
_OVER = Phase.OVER
_ACTION_CONFIRMED = Ev.ACTION_CONFIRMED


class InvalidOptionsError(ValueError):
    """Founding options that cannot make a game (size out of range, empty custom deck)."""


def deal(options: GameOptions, rng: Rng) -> tuple[tuple[RoleId, ...], frozenset[int]]:
    """The deck for this table, shuffled onto seats, and the lovers if the add-on is on."""
    if not MIN_PLAYERS <= options.players <= MAX_PLAYERS:
        raise InvalidOptionsError(f"players must be {MIN_PLAYERS}..{MAX_PLAYERS}")
    if options.deck is DeckId.CUSTOM and not any(n > 0 for _, n in options.custom_roles):
        raise InvalidOptionsError("a custom deck needs at least one role")
    cards, deck_lovers = deal_cards(options.deck, options.players, options.custom_roles)
    order = list(cards)
    rng.shuffle(order)
    lovers_on = deck_lovers if options.lovers is None else options.lovers
    lovers = frozenset(rng.sample(range(1, options.players + 1), 2)) if lovers_on else frozenset()
    return tuple(order), lovers


_player: Callable[..., Player] = builder(Player)
"""`Player` by position without its frozen `__init__` (core.builder): twelve and more a deal."""

_ROLE_NAMES: dict[RoleId, str] = {role: role.value for role in RoleId}

_INITIAL: dict[tuple[RoleId, int], RoleState] = {}


def _initial(role: RoleId, players: int) -> RoleState:
    """A fresh holder's role state (`RoleSpec.initial_state`), made once per role and table
    size: an immutable value (its dicts are never changed once built), so every deal may
    share it."""
    initial = _INITIAL.get((role, players))
    if initial is None:
        initial = _INITIAL[(role, players)] = ROLES[role].initial_state(players)
    return initial


def new_game(options: GameOptions, rng: Rng) -> StdResult:
    """Deal the roles (an event, so replay never re-rolls) and open night 1."""
    roles, lovers = deal(options, rng)
    return start_with_roles(options, roles, lovers, rng)


def start_with_roles(
    options: GameOptions, roles: tuple[RoleId, ...], lovers: frozenset[int], rng: Rng
) -> StdResult:
    """Open a game with a given deal (seat i gets roles[i-1]): scenarios, golden games."""
    if len(roles) != options.players:
        raise InvalidOptionsError("one role per seat")
    count = options.players
    players = tuple(
        _player(seat, ROLES[role], True, False, seat in lovers, _initial(role, count), ())
        for seat, role in enumerate(roles, start=1)
    )
    tx = Tx(GameState(options, players, Phase.NIGHT), rng)
    names = [_ROLE_NAMES[role] for role in roles]
    composition: dict[str, int] = {}
    for name in names:
        composition[name] = composition.get(name, 0) + 1
    tx.emit(
        Ev.GAME_STARTED,
        Audience.public(),
        world=options.world,
        players=options.players,
        deck=options.deck.value,
        composition=dict(sorted(composition.items())),
        lovers=bool(lovers),
        unanimous=options.unanimous,
        instant_kill=options.instant_kill,
    )
    tx.emit(
        Ev.ROLES_DEALT,
        Audience.system(),
        roles={str(seat): name for seat, name in enumerate(names, start=1)},
        lovers=sorted(lovers),
    )
    for seat, name in enumerate(names, start=1):
        tx.emit(Ev.ROLE_ASSIGNED, Audience.to(seat), role=name)
    if not first_stage(tx.state).hides_bonds:
        # S14: with a vagabond, teams and twins learn each other only after his steal step.
        reveal_bonds(tx)
    if lovers:
        tx.emit(Ev.PARTNER_REVEALED, Audience.group(lovers), kind="lovers", seats=sorted(lovers))
    # V2 "as soon as": a founder's deck can hand evil its majority before anyone sleeps.
    if not settle(tx):
        begin(tx)
    return tx.result()


# --- commands ------------------------------------------------------------------------------


def _check_ability(state: GameState, cmd: UseAbility) -> Rejection | None:
    ability = spec_of(state.player(cmd.actor)).ability(cmd.kind)
    if ability is None:
        return reject(Rej.NO_SUCH_ABILITY, kind=cmd.kind.value)
    return ability.check(state, state.player(cmd.actor), cmd.target)


def _use_ability(tx: Tx, cmd: UseAbility) -> None:
    actor = tx.state.player(cmd.actor)
    ability = spec_of(actor).ability(cmd.kind)
    assert ability is not None
    if cmd.kind not in _ANNOUNCED_BY_OWN_EVENT:
        kind = _KIND_NAMES[cmd.kind]
        tx.emit(_ACTION_CONFIRMED, Audience.to(cmd.actor), kind=kind, target=cmd.target)
    ability.perform(tx, actor, cmd.target)


_KIND_NAMES: dict[ActionKind, str] = {kind: kind.value for kind in ActionKind}

_ANNOUNCED_BY_OWN_EVENT = frozenset(
    {ActionKind.SHOOT, ActionKind.INSTANT_KILL, ActionKind.TRANSFER_VOTE, ActionKind.CHECK}
)


def _check_phase_timeout(state: GameState, cmd: PhaseTimeout) -> Rejection | None:
    if cmd.phase_seq != state.phase_seq:
        return reject(Rej.STALE_TIMER)
    return None


def _phase_timeout(tx: Tx, cmd: PhaseTimeout) -> None:
    on_timeout(tx)


_HANDLERS: dict[type, Handler[GameState, Tx]] = {
    UseAbility: Handler(_check_ability, _use_ability),
    Nominate: Handler(day.check_nominate, day.nominate),
    Vote: Handler(day.check_vote, day.vote),
    Interject: Handler(day.check_interject, day.interject),
    PlaceCall: Handler(calls.check_place, calls.place),
    AnswerCall: Handler(calls.check_answer, calls.answer),
    HangUp: Handler(calls.check_hang_up, calls.hang_up, needs_living_actor=False),
    ToggleCallMode: Handler(calls.check_toggle, calls.toggle),
    Say: Handler(chat.check_say, chat.say, needs_living_actor=False),
    Leave: Handler(leaving.check_leave, leaving.leave),
    PhaseTimeout: Handler(_check_phase_timeout, _phase_timeout, timer=True),
    CallTimeout: Handler(calls.check_timeout, calls.timeout, timer=True),
    FloorTimeout: Handler(day.check_floor_timeout, day.release_floor, timer=True),
}


def validate(state: GameState, command: Command) -> Rejection | None:
    """Why `command` would be refused now, or None if `apply` would accept it."""
    return _TABLE.validate(state, command)


def apply(state: GameState, command: Command, rng: Rng) -> StdResult | Rejection:
    """Validate, then change: a rejection leaves `state` exactly as it was."""
    tx = _TABLE.run(state, command, rng)
    return tx if isinstance(tx, Rejection) else tx.result()


def after_command(tx: Tx) -> None:
    """The flow after every accepted command (boardgame.io's flow after a move): settle
    victory, then move on if the command completed a step (the last vote, the last steal,
    the night room's last vote). Handlers and abilities only change state and emit events."""
    if tx.state.phase is _OVER or settle(tx):
        return
    advance_if_complete(tx)


_TABLE = HandlerTable(
    _HANDLERS,
    Refusals(Rej.NOT_A_PLAYER, Rej.GAME_OVER, Rej.ACTOR_DEAD),
    is_over=lambda state: state.phase is _OVER,
    open_tx=Tx,
    after=after_command,
)

# Bots and menus probe candidates by the thousand through these two (legal.py): the table's
# own methods, bound once, without a wrapper call per candidate.
check_seated: Callable[[GameState, Command], Rejection | None] = _TABLE.check_seated
"""`validate` for a running game's seat known to be allowed to act (see legal.py)."""
needs_living_actor: Callable[[type], bool] = _TABLE.needs_living_actor
