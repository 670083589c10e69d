"""ORM tables of the store; importing this package registers every table on `Base.metadata`."""

from vollmond.store.models.accounts import AccountRow, Role, WebSessionRow
from vollmond.store.models.base import Base
from vollmond.store.models.community import BlockRow, FriendshipRow, MailRow
from vollmond.store.models.entitlements import GrantRow, PremiumRow
from vollmond.store.models.games import GameCommandRow, GameEventRow, GameRow, GameStatus
from vollmond.store.models.leases import GameLeaseRow
from vollmond.store.models.ledgers import CreditEntryRow, KarmaEntryRow
from vollmond.store.models.moderation import AlarmRow, AuditEntryRow, RecordingRow, SanctionRow
from vollmond.store.models.phone import PhoneIdentityRow, PhoneNumberClaimRow, PhonePinFailureRow
from vollmond.store.models.seats import SeatCodeRow, SeatRow

__all__ = [
    "AccountRow",
    "AlarmRow",
    "AuditEntryRow",
    "Base",
    "BlockRow",
    "CreditEntryRow",
    "FriendshipRow",
    "GameCommandRow",
    "GameEventRow",
    "GameLeaseRow",
    "GameRow",
    "GameStatus",
    "GrantRow",
    "KarmaEntryRow",
    "MailRow",
    "PhoneIdentityRow",
    "PhoneNumberClaimRow",
    "PhonePinFailureRow",
    "PremiumRow",
    "RecordingRow",
    "Role",
    "SanctionRow",
    "SeatCodeRow",
    "SeatRow",
    "WebSessionRow",
]
