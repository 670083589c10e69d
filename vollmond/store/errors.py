"""Exceptions raised by the store.

Each failure a caller can sensibly react to has its own class, so that the web and phone
channels can map them to precise error codes without parsing messages.
"""

from __future__ import annotations


class StoreError(Exception):
    """Base class for every error the store raises on purpose."""


class AccountNotFoundError(StoreError, LookupError):
    """The account id does not exist."""

    def __init__(self, account_id: int) -> None:
        super().__init__(f"account {account_id} does not exist")
        self.account_id = account_id


class NameTakenError(StoreError):
    """Another account already uses this name (names compare case-insensitively)."""

    def __init__(self, name: str) -> None:
        super().__init__(f"account name {name!r} is taken")
        self.name = name


class InvalidAccountNameError(StoreError, ValueError):
    """The account name is empty, too long or contains control characters."""


class WeakPasswordError(StoreError, ValueError):
    """The password is too short or too long to be accepted."""


class InvalidPhoneNumberError(StoreError, ValueError):
    """Not a caller number: after removing separators, 3 to 20 digits with an optional '+'."""


class PhoneIdentityLinkedError(StoreError):
    """The phone identity is already linked to a different account."""

    def __init__(self, identity_id: int, account_id: int) -> None:
        super().__init__(f"phone identity {identity_id} is linked to account {account_id}")
        self.identity_id = identity_id
        self.account_id = account_id


class InvalidPinError(StoreError, ValueError):
    """A PIN must be 4 to 12 decimal digits (typed on a telephone keypad)."""


class PhoneIdentityNotFoundError(StoreError, LookupError):
    """The phone identity id does not exist."""

    def __init__(self, identity_id: int) -> None:
        super().__init__(f"phone identity {identity_id} does not exist")
        self.identity_id = identity_id


class GrantNotFoundError(StoreError, LookupError):
    """The grant id does not exist."""

    def __init__(self, grant_id: int) -> None:
        super().__init__(f"grant {grant_id} does not exist")
        self.grant_id = grant_id


class InsufficientCreditError(StoreError):
    """A debit would make the credit balance negative; nothing was booked."""

    def __init__(self, account_id: int, balance: int, amount: int) -> None:
        super().__init__(
            f"account {account_id} has {balance} credit, cannot apply change of {amount}"
        )
        self.account_id = account_id
        self.balance = balance
        self.amount = amount


class GameNotFoundError(StoreError, LookupError):
    """The game id does not exist."""

    def __init__(self, game_id: str) -> None:
        super().__init__(f"game {game_id!r} does not exist")
        self.game_id = game_id


class GameExistsError(StoreError):
    """A game with this id (or invitation code) already exists."""

    def __init__(self, game_id: str) -> None:
        super().__init__(f"game {game_id!r} already exists")
        self.game_id = game_id


class SeqConflictError(StoreError):
    """The log's next sequence number is not the one the writer expected.

    Raised instead of writing anything, so an actor that lost track of the log (for instance
    after a restart, or a second actor for the same game) can never duplicate or interleave
    entries. The writer must re-read the log and rebuild its state.
    """

    def __init__(self, game_id: str, expected_next_seq: int, log: str) -> None:
        super().__init__(
            f"{log} log of game {game_id!r} does not continue at seq {expected_next_seq}"
        )
        self.game_id = game_id
        self.expected_next_seq = expected_next_seq
        self.log = log


class LeaseLostError(StoreError):
    """An append made under a game's lease (owner and epoch, `gamelog.Fence`) that is no
    longer the lease's current one: another node took the game over (or it was released).

    Raised instead of writing anything, in the append's own transaction, so a node that was
    paused past its lease's time-to-live can never write after the new owner read the log:
    the writer must stop running the game (docs/deployment.md, "Fencing").
    """

    def __init__(self, game_id: str, owner: str, epoch: int) -> None:
        super().__init__(f"game {game_id!r}: the lease of {owner} in epoch {epoch} is not current")
        self.game_id = game_id
        self.owner = owner
        self.epoch = epoch
