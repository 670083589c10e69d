"""Identification: who the caller is, before the announcer (docs/phone-keys.md).

A caller number is never proof (caller IDs are spoofed at will), so it only pre-fills the
phone ID of the identity whose number was verified, and the PIN is asked. A call from a trusted
proxy that asserts a number verified through such a proxy signs in at once. Every PIN attempt
goes through the hub's identity service (`vollmond.service.identity`, over the store's
`check_pin`: lockout per identity, limit per source); the per-call limit is kept here. Key 4
confirms a number: the caller types the one-time code the browser showed, from the number
being linked (:mod:`vollmond.store.phone_numbers`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Final

from vollmond.phone.session.keys import Entry, Single, Token
from vollmond.service.identity import InvalidPinError, PinOutcome, VerifyOutcome

if TYPE_CHECKING:
    from vollmond.phone.session.menu import Announcer

PIN_DIGITS: Final = range(4, 13)
MAX_ID_DIGITS: Final = 12  # longer is a typing mistake

#: Where identification is; "choices" takes the single keys 1-4 at once.
STATES: Final = frozenset(
    {"choices", "prefilled", "pin_id", "pin_pin", "new_pin", "new_pin2", "verify"}
)


class Identification:
    """The identification steps of one call; the announcer hands it keys while it runs."""

    def __init__(self, announcer: Announcer) -> None:
        self.a = announcer
        self.s = announcer.s
        self.settings = announcer.s.identity
        self.state = "choices"
        self._pin_id: int | None = None
        self._prefilled_id: int | None = None
        self._new_pin = ""
        self._pin_failures = 0
        self._code_failures = 0

    # -- the start of a call ---------------------------------------------------------------
    async def start(self) -> None:
        caller, identities = self.s.caller, self.s.hub.identities
        if caller.asserted_number is not None:
            identity = await identities.asserted(caller.asserted_number)
            if identity is not None:
                await self.a.signed_in(identity.id, identity.account_id, known=True)
                return
        known = await identities.claimed(caller.best_number)
        if known is not None and known.has_pin:
            self._prefilled_id = self._pin_id = known.id
            self.state = "prefilled"
            self.s.say(self.s.t("phone.ident.prefilled"))
            return
        self.to_choices()

    def to_choices(self, *before: str) -> None:
        self.state = "choices"
        self.s.say(*before, self.s.t("phone.ident.choices"))

    # -- the Mode contract, delegated by the announcer -------------------------------------
    def immediate(self) -> frozenset[str]:
        return frozenset("1234") if self.state == "choices" else frozenset()

    def help(self) -> list[str]:
        t = self.s.t
        by_state: dict[str, Callable[[], str]] = {
            "choices": lambda: t("phone.ident.choices_long"),
            "prefilled": lambda: t("phone.ident.prefilled"),
            "pin_id": lambda: t("phone.ident.ask_id"),
            "pin_pin": lambda: t("phone.ident.ask_pin"),
            "new_pin": lambda: t("phone.ident.new_pin"),
            "new_pin2": lambda: t("phone.ident.confirm_pin"),
            "verify": lambda: t("phone.ident.verify_ask", n=self.settings.code_digits),
        }
        return [by_state[self.state]()]

    def reminder(self) -> list[str]:
        if self.state == "choices":
            return [self.s.t("phone.ident.choices")]
        return self.help()

    async def handle(self, token: Token) -> None:
        choice = _digits(token)
        handler = {
            "choices": self._choices,
            "prefilled": self._prefilled,
            "pin_id": self._pin_id_entered,
            "pin_pin": self._check,
            "new_pin": self._new_pin_entered,
            "new_pin2": self._create,
            "verify": self._verify,
        }[self.state]
        await handler(choice)

    # -- the steps -------------------------------------------------------------------------
    async def _choices(self, choice: str | None) -> None:
        t = self.s.t
        if choice == "1":
            self.state = "pin_id"
            self.s.say(t("phone.ident.ask_id"))
        elif choice == "2":
            self.a.guest()
        elif choice == "3":
            self.state = "new_pin"
            self.s.say(t("phone.ident.new_pin"))
        elif choice == "4":
            if self.s.caller.best_number == "anonymous":
                self.to_choices(t("phone.ident.verify_no_number"))
                return
            self.state = "verify"
            self.s.say(t("phone.ident.verify_ask", n=self.settings.code_digits))
        else:
            self.a.wrong(choice)

    async def _prefilled(self, choice: str | None) -> None:
        if choice == "0":
            self.to_choices()
            return
        await self._check(choice)

    async def _pin_id_entered(self, choice: str | None) -> None:
        if choice is None or not choice.isdigit() or len(choice) > MAX_ID_DIGITS:
            self.a.wrong(choice)
            return
        self._pin_id = int(choice)
        self.state = "pin_pin"
        self.s.say(self.s.t("phone.ident.ask_pin"))

    async def _check(self, choice: str | None) -> None:
        t = self.s.t
        checked = await self.s.hub.identities.check_pin(
            self._pin_id or 0,
            choice or "",
            source=self.s.caller.pin_source,
            settings=self.settings,
        )
        outcome = checked.outcome
        if outcome is PinOutcome.OK and checked.identity is not None:
            await self.a.signed_in(checked.identity.id, checked.identity.account_id, known=False)
            return
        if outcome is PinOutcome.SOURCE_BLOCKED:
            self.to_choices(t("phone.ident.source_blocked", n=self._minutes(checked.until)))
            return
        if outcome is PinOutcome.LOCKED:
            self.to_choices(t("phone.ident.locked", n=self._minutes(checked.until)))
            return
        if outcome is PinOutcome.LOCKED_NOW:
            self.to_choices(t("phone.ident.locked_now", n=self._minutes(checked.until)))
            return
        self._pin_failures += 1
        if self._pin_failures >= self.settings.pin_attempts_per_call:
            self.s.say(t("phone.ident.too_many"), remember=False)
            self.a.guest()
            return
        if self._prefilled_id is not None and self._pin_id == self._prefilled_id:
            self.state = "prefilled"
            self.s.say(t("phone.ident.wrong_pin"), t("phone.ident.prefilled"))
            return
        self.state = "pin_id"
        self.s.say(t("phone.ident.wrong"), t("phone.ident.ask_id"))

    def _minutes(self, until: datetime | None) -> int:
        """Whole minutes until `until`, rounded up (a caller is never told "0 minutes")."""
        if until is None:
            return 1
        return max(1, math.ceil((until - self.s.hub.identities.now()).total_seconds() / 60))

    async def _new_pin_entered(self, choice: str | None) -> None:
        t = self.s.t
        if choice is None or not choice.isdigit() or len(choice) not in PIN_DIGITS:
            self.s.say(t("phone.ident.pin_invalid"), t("phone.ident.new_pin"))
            return
        self._new_pin = choice
        self.state = "new_pin2"
        self.s.say(t("phone.ident.confirm_pin"))

    async def _create(self, choice: str | None) -> None:
        t = self.s.t
        if (choice or "") != self._new_pin:
            self.state = "new_pin"
            self.s.say(t("phone.ident.pin_mismatch"), t("phone.ident.new_pin"))
            return
        try:
            identity = await self.s.hub.identities.create(self._new_pin, self.settings)
        except InvalidPinError:
            self.state = "new_pin"
            self.s.say(t("phone.ident.pin_invalid"), t("phone.ident.new_pin"))
            return
        self.s.say(t("phone.ident.created", id=" ".join(str(identity.id))), remember=False)
        await self.a.signed_in(identity.id, None, known=False)

    async def _verify(self, choice: str | None) -> None:
        t = self.s.t
        if choice == "0":
            self.to_choices()
            return
        caller = self.s.caller
        verified = await self.s.hub.identities.verify_number(
            caller.best_number,
            choice or "",
            asserted=caller.asserted_number is not None,
            settings=self.settings,
        )
        if verified.outcome is VerifyOutcome.VERIFIED:
            self.to_choices(t("phone.ident.verify_ok"))
            return
        self._code_failures += 1
        if self._code_failures >= self.settings.code_attempts_per_call:
            self.to_choices(t("phone.ident.verify_too_many"))
            return
        self.s.say(
            t("phone.ident.verify_wrong"), t("phone.ident.verify_ask", n=self.settings.code_digits)
        )


def _digits(token: Token) -> str | None:
    if isinstance(token, Entry):
        return token.digits
    if isinstance(token, Single):
        return token.key
    return None
