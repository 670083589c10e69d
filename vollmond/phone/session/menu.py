"""Identification and the announcer ("Ausrufer", X1): where a caller lands, picks or founds a game.

Identification (:mod:`.ident`): a caller number only pre-fills the phone ID of a verified
number and the PIN is asked; otherwise the caller chooses 1 (phone ID and PIN), 2 (guest),
3 (create a phone ID by keypad) or 4 (confirm a number with the code from the browser).

The announcer's keys (docs/phone-keys.md): 1 public games, 2 join by number code, 3 listen in,
5 conference rooms (:mod:`.conference`), 00# found a private round; in lists ``NN#`` picks,
``0#`` goes back, ``00#`` founds a public game in the world shown. Lobby: ``1#`` lets the
founder start early, ``#3`` status, ``#9`` leaves.
"""

from __future__ import annotations

import asyncio
import secrets
import weakref
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from vollmond.engine.ruleset import get_ruleset, ruleset_ids
from vollmond.i18n.render import MissingMessageError, load_catalogue
from vollmond.moderation import ALL, Area
from vollmond.phone.session import community
from vollmond.phone.session.codes import (
    PHONE_CODE_DIGITS,
    invitation_from_phone,
    phone_code,
    spoken_groups,
)
from vollmond.phone.session.conference import KEY as ROOMS_KEY
from vollmond.phone.session.conference import open_rooms
from vollmond.phone.session.duty import go_on_duty
from vollmond.phone.session.founding import FoundingSteps
from vollmond.phone.session.ident import Identification
from vollmond.phone.session.keys import Entry, Info, Single, Token
from vollmond.phone.session.prefs import expert_for
from vollmond.phone.session.prompts import Priority
from vollmond.phone.session.seatcodes import wrong_codes
from vollmond.service.enforce import denial_text
from vollmond.service.hub import GameStatus, Hub, LobbyError, TableInfo
from vollmond.service.policy import SizeNotAllowedError, unlock_private_size
from vollmond.worlds import World, get_world, world_ids

if TYPE_CHECKING:
    from vollmond.phone.session.session import PhoneSession

KARMA_READ_OUT: Final = 3
"""How many of the latest karma changes `#3` reads out in the announcer."""

STANDARD: Final = "standard"
"""The rule set with its own founding steps (`founding.py`) and the first in the menus."""


def phone_rulesets() -> tuple[str, ...]:
    """The rule sets a caller can found and play, in the registry's order: every rule set
    with a keypad (`HasKeypad`), each with at least one world."""
    from vollmond.phone.session.rules_line import has_keypad  # noqa: PLC0415

    return tuple(r for r in ruleset_ids() if has_keypad(get_ruleset(r)) and world_ids(r))


def phone_world_ids() -> tuple[str, ...]:
    """Every world a caller can play in, the standard rules' first (their numbers stay)."""
    return tuple(w for r in phone_rulesets() for w in world_ids(r))


class Announcer:
    """The session's menus; one instance per call, re-entered after every game."""

    def __init__(self, session: PhoneSession) -> None:
        self.s = session
        self.state = "ident"
        self.purpose = "play"  # what the world list is for: play, watch, found
        self.world: World | None = None
        self.tables: list[TableInfo] = []
        self.private = True
        self.lobby_game: str | None = None
        self.lobby_token: str | None = None
        self.founder = False
        self.ident = Identification(self)
        self._code_attempts: deque[float] = deque()
        self._waiter: asyncio.Task[None] | None = None
        self.rejoin: tuple[str, int] | None = None
        self.page = 0
        self._seat_code_wrong = 0
        self.size_max: int | None = None  # the largest round this caller may found
        self.ruleset_id = STANDARD  # the rules of the round being founded
        self.setup = FoundingSteps(self)

    # -- identification (vollmond.phone.session.ident) -------------------------------------
    async def identify(self) -> None:
        await self.ident.start()

    async def signed_in(self, identity_id: int, account_id: int | None, *, known: bool) -> None:
        self.s.identity_id = identity_id
        self.s.account_id = account_id
        if account_id is not None:
            self.s.name = await self.s.hub.account_name(account_id)
        else:
            self.s.name = self.s.t("phone.ident.player_name", n=identity_id)
        if await self.refused(ALL):
            self.s.hangup_requested.set()
            return
        await go_on_duty(self.s)  # a moderator hears new alarms for the rest of the call
        self.rejoin = await self._find_running_seat()
        self.s.expert = await expert_for(self.s.hub, identity_id)
        await community.signed_in(self)  # mailbox and friends (X3, X4): notices, invitations
        if self.rejoin is not None:  # "Tippe 4 für dein Spiel" before anything else
            self.open_menu()
            return
        if not self.s.expert:
            key = "phone.ident.known" if known else "phone.ident.welcome"
            self.s.say(self.s.t(key, name=self.s.name), remember=False)
        self.open_menu()

    async def refused(
        self, *areas: Area, world: str | None = None, private: bool = False, spectate: bool = False
    ) -> bool:
        """O5: a banned caller hears the ban's reason and expiry and is refused. `areas`, or
        the areas of founding/joining (`world`, `private`) or spectating a game."""
        enforcer = self.s.enforcer
        if enforcer is None:
            return False
        if world is not None:
            denied = await enforcer.check_game(
                self.s.person, world, private=private, spectate=spectate
            )
        else:
            denied = await enforcer.check(self.s.person, *areas)
        if denied is None:
            return False
        self.s.say(denial_text(denied, self.s.lang), priority=Priority.URGENT, remember=False)
        return True

    async def _find_running_seat(self) -> tuple[str, int] | None:
        """A seat the signed-in caller still holds in a running game (after a dropped call):
        by account over every running game, or by phone identity (node-local memory)."""
        hub = self.s.hub
        if self.s.account_id is not None:
            for game_id, actor in list(hub.followed_games().items()):
                if actor.state is None or actor.ruleset.is_over(actor.state):
                    continue
                for seat in await hub.seats(game_id):
                    if seat.account_id == self.s.account_id and seat.house is not None:
                        return game_id, seat.house
        if self.s.identity_id is not None:
            held = _seated_identities(hub).get(self.s.identity_id)
            running = await hub.running_actor(held[0]) if held is not None else None
            state = running.state if running is not None else None
            if held is not None and running is not None and state is not None:
                return None if running.ruleset.is_over(state) else held
        return None

    def remember_seat(self, game_id: str, house: int) -> None:
        if self.s.identity_id is not None:
            _seated_identities(self.s.hub)[self.s.identity_id] = (game_id, house)

    def guest(self) -> None:
        self.s.name = self.s.t("phone.ident.player_name", n=f"{secrets.randbelow(900) + 100}")
        self.s.say(self.s.t("phone.ident.guest", name=self.s.name), remember=False)
        self.open_menu()

    # -- the announcer ---------------------------------------------------------------------
    def open_menu(self) -> None:
        """The announcer's choices, short (who the announcer is and every key in full come
        with ``#1``); a caller who still holds a seat hears the way back to it first."""
        self.state = "menu"
        self.lobby_game = self.lobby_token = None
        self.founder = False
        lines = [self.s.t("phone.menu.choices")]
        if self.rejoin is not None:
            lines.insert(0, self.s.t("phone.menu.rejoin", n=self.rejoin[1]))
        lines += community.menu_lines(self)  # a friend's invitation not told yet (X4)
        self.s.say(*lines)

    def immediate(self) -> frozenset[str]:
        if self.state == "ident":
            return self.ident.immediate()
        if self.state == "menu":
            return frozenset(("1", "2", "3", "4", ROOMS_KEY)) | community.MENU_KEYS
        if self.state == "setup":
            return self.setup.immediate()
        return frozenset()

    def hash_immediate(self) -> bool:
        return False

    def help(self) -> list[str]:
        s = self.s
        by_state: dict[str, Callable[[], list[str]]] = {
            "ident": self.ident.help,
            "rulesets": lambda: [self._rulesets_text(long=True)],
            "worlds": lambda: [self._worlds_text(long=True)],
            "tables": lambda: [self._tables_text(long=True)],
            "watch": lambda: [self._watch_text(long=True)],
            "size": lambda: [self._size_text(long=True)],
            "setup": self.setup.help,
            "code": lambda: [s.t("phone.menu.ask_code_long")],
            "seatcode": lambda: [s.t("phone.menu.ask_seat_code_long")],
            "lobby": lambda: self._lobby_keys(long=True),
        }
        make = by_state.get(self.state)
        return make() if make is not None else [s.t("phone.menu.choices_long")]

    def reminder(self) -> list[str] | None:
        """The current question again, short; nothing while waiting at a table."""
        by_state: dict[str, Callable[[], list[str]]] = {
            "ident": self.ident.reminder,
            "menu": lambda: [self.s.t("phone.menu.choices")],
            "rulesets": lambda: [self._rulesets_text()],
            "worlds": lambda: [self._worlds_text()],
            "tables": lambda: [self._tables_text()],
            "watch": lambda: [self._watch_text()],
            "size": lambda: [self._size_text()],
            "setup": lambda: [self.setup.question()],
            "code": lambda: [self.s.t("phone.menu.ask_code")],
            "seatcode": lambda: [self.s.t("phone.menu.ask_seat_code")],
        }
        make = by_state.get(self.state)
        return make() if make is not None else None

    async def handle(self, token: Token) -> None:
        if self.state == "ident" and not (isinstance(token, Info) and token.digit == "9"):
            await self.ident.handle(token)
            return
        if isinstance(token, Info) and token.digit == "9":
            if self.state == "lobby":
                await self._leave_table()
            else:
                self.s.hang_up()
            return
        if isinstance(token, Info) and token.digit == "3" and self.state == "lobby":
            await self._lobby_status()
            return
        if isinstance(token, Info) and token.digit == "3" and self.state == "menu":
            await self._karma_status()
            return
        choice = _digits(token)
        if choice is None:
            self.wrong(None)
            return
        if self.state == "setup":
            await self.setup.handle(token)
            return
        handler = {
            "menu": self._menu,
            "rulesets": self._rulesets,
            "worlds": self._worlds,
            "tables": self._tables,
            "watch": self._watch,
            "size": self._size,
            "code": self._code,
            "seatcode": self._seat_code,
            "lobby": self._lobby,
        }.get(self.state)
        if handler is None:
            self.wrong(choice)
            return
        await handler(choice)

    def wrong(self, choice: str | None) -> None:
        if choice is not None and choice.isdigit():
            self.s.refuse(self.s.t("phone.menu.no_choice", n=int(choice)))
        else:
            self.s.refuse(self.s.t("phone.keyerror.not_here"))

    async def _menu(self, choice: str) -> None:
        if choice == "1":
            self._to_worlds("play")
        elif choice == "2":
            self.state = "code"
            self.s.say(self.s.t("phone.menu.ask_code"))
        elif choice == "3":
            self._to_worlds("watch")
        elif choice == ROOMS_KEY:  # conference rooms (X2): vollmond/phone/session/conference.py
            await open_rooms(self.s)
        elif choice == "00":
            self._to_rulesets()
        elif choice == "4" and self.rejoin is not None:
            game_id, house = self.rejoin
            self.rejoin = None
            actor = await self.s.hub.running_actor(game_id)
            if actor is not None and not await self.refused(world=actor.options.world):
                self.world = get_world(actor.options.world)
                await self._enter(game_id, house)
            else:
                self.open_menu()
        elif choice == "4":
            self.state = "seatcode"
            self.s.say(self.s.t("phone.menu.ask_seat_code"))
        elif await community.menu_key(self, choice):  # 6 mailbox, 7 friends, 8 invitation
            pass
        else:
            self.wrong(choice)

    # worlds
    def _worlds_text(self, *, long: bool = False) -> str:
        items = [
            self.s.t("phone.menu.world_item", n=i, name=get_world(w).names_in(self.s.lang).world)
            for i, w in enumerate(self._world_ids(), start=1)
        ]
        return self._page_text(items, "phone.menu.worlds", long=long)

    def _world_ids(self) -> tuple[str, ...]:
        """The worlds of the chosen rule set when founding, else of every rule set."""
        return world_ids(self.ruleset_id) if self.purpose == "found" else phone_world_ids()

    # rule sets (founding)
    def _to_rulesets(self) -> None:
        self.state = "rulesets"
        self.page = 0
        self.s.say(self._rulesets_text())

    def _rulesets_text(self, *, long: bool = False) -> str:
        items = [
            self.s.t("phone.menu.world_item", n=i, name=self.s.t(f"{r}.phone.name"))
            for i, r in enumerate(phone_rulesets(), start=1)
        ]
        return self._page_text(items, "phone.menu.rulesets", long=long)

    async def _rulesets(self, choice: str) -> None:
        if _is_back(choice):
            self.open_menu()
            return
        ids = phone_rulesets()
        n = int(choice)
        if not 1 <= n <= len(ids):
            self.wrong(choice)
            return
        self.ruleset_id = ids[n - 1]
        worlds = world_ids(self.ruleset_id)
        if len(worlds) == 1:  # nothing to choose: straight to the size
            self.purpose = "found"
            self.world = get_world(worlds[0])
            self.private = True
            await self._ask_size()
            return
        self._to_worlds("found")

    def _page_text(self, items: list[str], key: str, *, long: bool, **params: Any) -> str:
        """A list read one page at a time ("1 bis 5, weiter mit 9 9 Raute"); the numbers stay
        the same on every page, so a caller who knows them types any at once. ``#1`` reads
        the whole list with every key."""
        if long:
            return self.s.t(f"{key}_long", list="; ".join(items), **params)
        pages = max(1, -(-len(items) // PAGE))
        page = self.page % pages
        shown = "; ".join(items[page * PAGE : (page + 1) * PAGE])
        line = self.s.t(key, list=shown, **params)
        return f"{line} {self.s.t('phone.menu.more')}" if pages > 1 else line

    def _next_page(self, say: Callable[[], str]) -> None:
        self.page += 1
        self.s.say(say())

    def _to_worlds(self, purpose: str) -> None:
        self.purpose = purpose
        self.state = "worlds"
        self.page = 0
        self.s.say(self._worlds_text())

    async def _worlds(self, choice: str) -> None:
        if _is_back(choice):
            self.open_menu()
            return
        if choice == NEXT_PAGE:
            self._next_page(self._worlds_text)
            return
        ids = self._world_ids()
        n = int(choice)
        if not 1 <= n <= len(ids):
            self.wrong(choice)
            return
        self.world = get_world(ids[n - 1])
        self.ruleset_id = self.world.ruleset
        if self.purpose == "found":
            self.private = True
            await self._ask_size()
        elif self.purpose == "watch":
            await self._show_watch()
        else:
            await self._show_tables()

    def _world_name(self) -> str:
        assert self.world is not None
        return self.world.names_in(self.s.lang).world

    # public tables
    async def _show_tables(self) -> None:
        assert self.world is not None
        self.tables = [
            t
            for t in await self.s.hub.public_tables(self.world.id)
            if t.game.status is GameStatus.LOBBY and len(t.seats) < t.size
        ][: int(NEXT_PAGE) - 1]
        self.state = "tables"
        self.page = 0
        self.s.say(self._tables_text())

    def _tables_text(self, *, long: bool = False) -> str:
        if not self.tables:
            return self.s.t("phone.menu.tables_none", name=self._world_name())
        items = []
        for i, table in enumerate(self.tables, start=1):
            deck_key = str(table.game.options.get("engine", {}).get("deck", "auto"))
            assert self.world is not None
            items.append(
                self.s.t(
                    "phone.menu.table_item",
                    n=i,
                    deck=self.world.deck_name(deck_key, self.s.lang),
                    free=table.size - len(table.seats),
                    size=table.size,
                )
            )
        return self._page_text(items, "phone.menu.tables", long=long, name=self._world_name())

    async def _tables(self, choice: str) -> None:
        if choice == "00":
            assert self.world is not None
            self.private = False
            self.ruleset_id = self.world.ruleset
            await self._ask_size()
            return
        if _is_back(choice):
            self._to_worlds(self.purpose)
            return
        if choice == NEXT_PAGE:
            self._next_page(self._tables_text)
            return
        n = int(choice)
        if not 1 <= n <= len(self.tables):
            self.wrong(choice)
            return
        await self._join(self.tables[n - 1].game.id)

    # listening in
    async def _show_watch(self) -> None:
        assert self.world is not None
        self.tables = [
            t
            for t in await self.s.hub.public_tables(self.world.id)
            if t.game.status is GameStatus.RUNNING
        ][: int(NEXT_PAGE) - 1]
        self.state = "watch"
        self.page = 0
        self.s.say(self._watch_text())

    def _watch_text(self, *, long: bool = False) -> str:
        if not self.tables:
            return self.s.t("phone.menu.watch_none", name=self._world_name())
        items = [
            self.s.t(
                "phone.menu.watch_item",
                n=i,
                players=len(t.seats),
                phase=self._phase_name(t.game.ruleset, t.phase or "night"),
            )
            for i, t in enumerate(self.tables, start=1)
        ]
        return self._page_text(items, "phone.menu.watch", long=long, name=self._world_name())

    def _phase_name(self, ruleset: str, phase: str) -> str:
        """A running game's phase as spoken: the rule set's own word (its catalogue's
        ``<ruleset>.phone.phase.<name>``), else the standard rules'."""
        names = load_catalogue(self.s.lang)
        for key in (f"{ruleset}.phone.phase.{phase}", f"phase.{phase}"):
            if key in names:
                return self.s.t(key)
        return phase

    async def _watch(self, choice: str) -> None:
        if _is_back(choice):
            self._to_worlds("watch")
            return
        if choice == NEXT_PAGE:
            self._next_page(self._watch_text)
            return
        n = int(choice)
        if not 1 <= n <= len(self.tables):
            self.wrong(choice)
            return
        actor = await self.s.hub.running_actor(self.tables[n - 1].game.id)
        if actor is None or actor.state is None:
            self.s.say(self.s.t("phone.lobby.not_running"), remember=False)
            await self._show_watch()
            return
        if await self.refused(world=actor.options.world, spectate=True):
            self.open_menu()
            return
        self.s.say(self.s.t("phone.menu.watching", name=self._world_name()))
        await self._enter(actor.game_id, None)

    # karma
    async def _karma_status(self) -> None:
        """`#3` in the announcer: the caller's karma, its latest changes with their reasons,
        and how long karma unlocks larger private rounds (P3, P5)."""
        s = self.s
        owner = s.ledger_owner  # the account, or a phone-only identity's own ledger
        if owner is None:
            s.say(s.t("phone.menu.karma_guest"))
            return
        standing = await s.hub.standing(owner)
        lines = [s.t("phone.menu.karma_total", n=standing.karma)]
        recent = await s.hub.karma_history(owner, KARMA_READ_OUT)
        if recent:
            items = [
                s.t("phone.menu.karma_item", amount=f"{e.amount:+d}", reason=self._reason(e.reason))
                for e in recent
            ]
            lines.append(s.t("phone.menu.karma_recent", list="; ".join(items)))
        if standing.karma_unlock_until is not None:
            date = f"{standing.karma_unlock_until:%d.%m.%Y}"
            lines.append(s.t("phone.menu.karma_unlock", date=date))
        s.say(*lines)

    def _reason(self, code: str) -> str:
        try:
            return self.s.t(f"karma.reason.{code}")
        except MissingMessageError:  # a booking by hand (moderation, `vollmond admin grant`)
            return self.s.t("karma.reason.other")

    # founding
    async def _ask_size(self) -> None:
        """The size question offers only what this caller may found: a guest's private round
        ends at the free size, a signed-in caller's at what premium, karma or credit unlock;
        and only what the chosen rules can deal."""
        policy = self.s.hub.policy
        rules = get_ruleset(self.ruleset_id)
        self.size_max = min(policy.max_players, rules.max_players)
        if self.private:
            standing = await self.s.hub.standing(self.s.ledger_owner)
            try:
                unlock_private_size(policy, policy.max_players, standing)
            except SizeNotAllowedError as exc:
                self.size_max = max(policy.min_players, min(exc.allowed, self.size_max))
        self.state = "size"
        self.s.say(self._size_text())

    def _size_min(self) -> int:
        return max(self.s.hub.policy.min_players, get_ruleset(self.ruleset_id).min_players)

    def _size_text(self, *, long: bool = False) -> str:
        policy = self.s.hub.policy
        key = "phone.menu.ask_size" if self.private else "phone.menu.ask_size_public"
        return self.s.t(
            f"{key}_long" if long else key,
            min=self._size_min(),
            max=self.size_max or policy.max_players,
            free=policy.private_default_max,
        )

    async def _size(self, choice: str) -> None:
        if _is_back(choice):
            self._to_worlds("found" if self.private else "play")
            return
        assert self.world is not None
        size = int(choice)
        policy = self.s.hub.policy
        if not self._size_min() <= size <= (self.size_max or policy.max_players):
            self.s.refuse(self._size_text())
            return
        if self.world.ruleset == STANDARD:
            self.state = "setup"
            self.setup.begin(size, self.world)
            return
        # The other rule sets are founded with their own defaults (their lengths and decks
        # are chosen in the browser).
        rules = get_ruleset(self.world.ruleset)
        await self.found(rules.id, rules.decode_options({"players": size, "world": self.world.id}))

    async def found(self, ruleset: str, options: Any) -> None:
        """Found the round the caller put together (FoundingSteps, or a rule set's defaults)
        and take its first seat."""
        size = options.players
        if await self.refused(world=options.world, private=self.private):
            self.open_menu()
            return
        try:
            founded = await self.s.hub.found(
                options,
                ruleset=ruleset,
                private=self.private,
                host_account_id=self.s.account_id,
                host_name=self.s.name,
                channel="phone",
                host_phone_id=self.s.identity_id,
            )
        except LobbyError as exc:
            self._lobby_error(exc)
            self.state = "size"
            self.s.say(self._size_text())
            return
        assert founded.seat is not None and founded.token is not None
        if founded.invitation_code is not None:
            code = phone_code(founded.invitation_code)
            self.s.say(
                self.s.t(
                    "phone.menu.founded_private",
                    name=self._world_name(),
                    size=size,
                    code=", ".join(spoken_groups(code)),
                    letters=" ".join(founded.invitation_code),
                )
            )
        else:
            self.s.say(self.s.t("phone.menu.founded_public", name=self._world_name(), size=size))
        self.founder = True
        await self._seated(founded.game.id, founded.token, started=False, taken=1, size=size)

    def _lobby_error(self, exc: LobbyError) -> None:
        policy = self.s.hub.policy
        key = f"phone.lobby.{exc.code}"
        try:
            line = self.s.t(
                key,
                min=policy.min_players,
                max=policy.max_players,
                free=policy.private_default_max,
            )
        except LookupError:
            line = self.s.t("phone.lobby.default")
        self.s.say(line, remember=False)

    # joining by code
    async def _code(self, choice: str) -> None:
        if _is_back(choice):
            self.open_menu()
            return
        now = self.s.clock()
        while self._code_attempts and now - self._code_attempts[0] > 60:
            self._code_attempts.popleft()
        if len(self._code_attempts) >= self.s.hub.policy.invitation_attempts_per_minute:
            self.s.say(self.s.t("phone.menu.code_limit"), remember=False)
            return
        self._code_attempts.append(now)
        if len(choice) != PHONE_CODE_DIGITS:
            self.s.say(self.s.t("phone.menu.code_length"), self.s.t("phone.menu.ask_code"))
            return
        code = invitation_from_phone(choice)
        game = await self.s.hub.find_by_invitation(code) if code else None
        if game is None or game.status is not GameStatus.LOBBY:
            self.s.say(self.s.t("phone.menu.code_unknown"), self.s.t("phone.menu.ask_code"))
            return
        self.world = get_world(game.world)
        await self._join(game.id)

    # a guest's way back: 4 and the seat code
    async def _seat_code(self, choice: str) -> None:
        if _is_back(choice):
            self.open_menu()
            return
        wrong, settings = wrong_codes(self.s.hub), self.s.settings
        source = self.s.caller.pin_source
        if self._seat_code_wrong >= settings.seat_code_tries_per_call or wrong.blocked(
            source, settings
        ):
            self.s.say(self.s.t("phone.menu.code_limit"), remember=False)
            self.open_menu()
            return
        hub = self.s.hub
        held = await hub.seat_codes.find(choice)
        game = await hub.game(held.game_id) if held is not None else None
        if held is None or game is None or game.status not in OPEN:
            self._seat_code_wrong += 1
            wrong.count(source)
            self.s.refuse(self.s.t("phone.menu.seat_code_unknown"))
            return
        token = await hub.seat_codes.renew_token(held)
        if token is None:
            self.s.refuse(self.s.t("phone.menu.seat_code_unknown"))
            return
        self.world = get_world(game.world)
        self.founder = False
        table = await hub.table(held.game_id)
        await self._seated(
            held.game_id, token, started=False, taken=len(table.seats), size=table.size, code=choice
        )

    # the table before the start
    async def _join(self, game_id: str) -> None:
        game = (await self.s.hub.table(game_id)).game
        if await self.refused(world=game.world, private=game.private):
            self.open_menu()
            return
        try:
            joined = await self.s.hub.join(
                game_id,
                account_id=self.s.account_id,
                name=self.s.name,
                channel="phone",
                phone_identity_id=self.s.identity_id,
            )
        except LobbyError as exc:
            self._lobby_error(exc)
            self.s.say(self.s.t("phone.help_hint"), remember=False)
            return
        table = await self.s.hub.table(game_id)
        self.world = get_world(table.game.world)
        self.founder = False
        await self._seated(
            game_id, joined.token, started=joined.started, taken=len(table.seats), size=table.size
        )

    async def _seated(
        self,
        game_id: str,
        token: str,
        *,
        started: bool,
        taken: int,
        size: int,
        code: str | None = None,
    ) -> None:
        """At the table (or in the game): a guest hears the code that brings them back to this
        seat — the one they typed to get back, or a new one."""
        self.lobby_game, self.lobby_token = game_id, token
        if self.s.identity_id is None:
            code = code or await self._new_seat_code(game_id, token)
            self.s.say(self.s.t("phone.menu.seat_code", code=" ".join(code)), priority=NEWS)
        if started or await self.s.hub.running_actor(game_id) is not None:
            await self._start_playing()
            return
        self.state = "lobby"
        self.s.say(
            self.s.t("phone.menu.seated", name=self._world_name(), taken=taken, size=size),
            *self._lobby_keys(),
        )
        self._waiter = self.s.spawn(self._wait_for_start(), name=f"lobby:{game_id}")

    async def _new_seat_code(self, game_id: str, token: str) -> str:
        hub, settings = self.s.hub, self.s.settings
        seat = await hub.seat_for(game_id, token)
        assert seat is not None  # just seated with this token
        return await hub.seat_codes.issue(
            game_id, seat.id, digits=settings.seat_code_digits, ttl_s=settings.seat_code_ttl_s
        )

    def _start_min(self) -> int:
        """Fewest seats the table's rules start with (the founder's early start)."""
        games = self.s.hub.followed_games()
        actor = games.get(self.lobby_game) if self.lobby_game else None
        ruleset = actor.ruleset.id if actor is not None else self.ruleset_id
        return int(get_ruleset(ruleset).min_players)

    def _lobby_keys(self, *, long: bool = False) -> list[str]:
        suffix = "_long" if long else ""
        lines = [self.s.t(f"phone.menu.lobby_keys{suffix}")]
        if self.founder:
            lines.append(self.s.t(f"phone.menu.lobby_host_keys{suffix}", min=self._start_min()))
        return lines

    async def _wait_for_start(self) -> None:
        """Poll for the start (the hub has no lobby notifications); look at the stored status
        about once a second, so a round the host aborts sends the caller back to the menu and
        a round its owner started on another process (games sharded) is entered."""
        game_id = self.lobby_game
        checks = 0
        while game_id is not None and game_id == self.lobby_game:
            actor = self.s.hub.followed_games().get(game_id)
            if actor is not None and actor.state is not None:
                await self.s.run_exclusive(self._start_playing)
                return
            checks += 1
            if checks * self.s.lobby_poll_s >= 1.0:
                checks = 0
                game = await self.s.hub.game(game_id)
                if game.status in (GameStatus.ABORTED, GameStatus.FINISHED):
                    await self.s.run_exclusive(self._aborted)
                    return
                # Started by its owner on another process, or here (the status is stored
                # before the actor's first writes; the hub answers once it is open): only a
                # game that can be followed is entered — a mirror not reachable yet would
                # make entering say "not running" and end the wait for good.
                if (
                    game.status is GameStatus.RUNNING
                    and await self.s.hub.running_actor(game_id) is not None
                ):
                    await self.s.run_exclusive(self._start_playing)
                    return
            await asyncio.sleep(self.s.lobby_poll_s)

    async def _aborted(self) -> None:
        if self.state != "lobby":
            return
        self._waiter = None
        self.s.say(self.s.t("phone.menu.aborted"), remember=False)
        self.open_menu()

    def stop_waiting(self) -> None:
        if self._waiter is not None and self._waiter is not asyncio.current_task():
            self._waiter.cancel()
        self._waiter = None

    async def _start_playing(self) -> None:
        game_id, token = self.lobby_game, self.lobby_token
        if game_id is None or token is None or self.s.seat is not None:
            return
        seat = await self.s.hub.seat_for(game_id, token)
        if seat is None or seat.house is None:
            self.open_menu()
            return
        self.stop_waiting()
        await self._enter(game_id, seat.house)

    async def _enter(self, game_id: str, house: int | None) -> None:
        from vollmond.phone.session.game import GameLine, has_calls  # noqa: PLC0415
        from vollmond.phone.session.rules_line import RulesLine  # noqa: PLC0415

        actor = await self.s.hub.running_actor(game_id)  # where games are sharded: a mirror
        if actor is None:
            self.s.say(self.s.t("phone.lobby.not_running"), remember=False)
            self.open_menu()
            return
        line: GameLine | RulesLine
        if has_calls(actor.ruleset):
            line = GameLine(self.s, actor, house)
        else:
            line = RulesLine(self.s, actor, house)
        self.state = "game"
        if house is not None:
            self.remember_seat(game_id, house)
        await line.attach()
        self.s.set_mode(line)

    async def _lobby(self, choice: str) -> None:
        """The founder's keys at the table: ``1#`` starts early, ``2#`` fills the free seats
        with bots (the table is then full and starts)."""
        if choice not in ("1", "2") or not self.founder or self.lobby_game is None:
            self.wrong(choice)
            return
        try:
            if choice == "2":
                added = await self.s.hub.fill_with_bots(
                    self.lobby_game, by_account_id=self.s.account_id
                )
                self.s.say(self.s.t("phone.menu.bots_added", n=added), priority=NEWS)
            else:
                await self.s.hub.start(self.lobby_game, by_account_id=self.s.account_id)
        except LobbyError as exc:
            self._lobby_error(exc)
            return
        await self._start_playing()

    async def _lobby_status(self) -> None:
        if self.lobby_game is None:
            return
        table = await self.s.hub.table(self.lobby_game)
        self.s.say(self.s.t("phone.menu.lobby_status", taken=len(table.seats), size=table.size))

    async def _leave_table(self) -> None:
        game_id, token = self.lobby_game, self.lobby_token
        self.stop_waiting()
        if game_id is not None and token is not None:
            try:
                await self.s.hub.leave_lobby(game_id, token)
            except LobbyError as exc:
                self._lobby_error(exc)
        self.s.say(self.s.t("phone.menu.left_table"), remember=False)
        self.open_menu()

    def after_game(self) -> None:
        """Back from a game (over, left, or stopped listening)."""
        self.rejoin = None
        if self.s.identity_id is not None:
            _seated_identities(self.s.hub).pop(self.s.identity_id, None)
        self.open_menu()


_SEATED: weakref.WeakKeyDictionary[Hub, dict[int, tuple[str, int]]] = weakref.WeakKeyDictionary()


def _seated_identities(hub: Hub) -> dict[int, tuple[str, int]]:
    """Phone identities without an account and the seat each holds, per hub (node-local)."""
    return _SEATED.setdefault(hub, {})


NEWS: Final = Priority.NEWS
OPEN: Final = (GameStatus.LOBBY, GameStatus.RUNNING)

PAGE: Final = 4
"""Items read per page of a list."""

NEXT_PAGE: Final = "99"
"""``99#`` reads the next page of a list (no world or table has the number 99)."""


def _digits(token: Token) -> str | None:
    if isinstance(token, Entry):
        return token.digits
    if isinstance(token, Single):
        return token.key
    return None


def _is_back(choice: str) -> bool:
    return choice == "0"
