"""An admin calls off a game (``vollmond admin abort-game``), running or not yet started.

The command line is another process than the service, so the decision is written where both
meet, the database: the game's status becomes ABORTED (audited). The running service's
enforcement loop (:mod:`vollmond.service.enforce`) notices it within ``enforce_poll_s``, tells
everyone at the table and stops the game's actor; a restart does not resume an aborted game.
A round that never started gets its founding charge back, as when its host calls it off.
"""

from __future__ import annotations

from datetime import datetime

from vollmond.moderation import audit
from vollmond.moderation.authority import load_staff
from vollmond.moderation.errors import ModerationError
from vollmond.settings.moderation import ModerationSettings
from vollmond.store.credit import credit_change
from vollmond.store.db import Sessions
from vollmond.store.errors import GameNotFoundError
from vollmond.store.karma import seat_owner
from vollmond.store.models import GameRow, GameStatus


class GameNotAbortableError(ModerationError):
    """The game has already ended (finished or aborted)."""


async def abort_game(
    sessions: Sessions,
    settings: ModerationSettings,
    game_id: str,
    *,
    by: int,
    reason: str,
    now: datetime,
) -> GameStatus:
    """Mark `game_id` aborted on behalf of admin `by`; returns the status it had."""
    async with sessions.begin() as session:
        (await load_staff(session, by, settings)).require("administer", "abort a game")
        row = await session.get(GameRow, game_id, with_for_update=True)
        if row is None:
            raise GameNotFoundError(game_id)
        before = GameStatus(row.status)
        if before not in (GameStatus.LOBBY, GameStatus.RUNNING):
            raise GameNotAbortableError(f"game {game_id} is {before.value}")
        row.status = GameStatus.ABORTED
        row.finished_at = now
        charge = int(row.options.get("charge", 0))
        # Who paid the founding charge: the host's account, or a phone-only founder.
        host = seat_owner(row.host_account_id, row.options.get("charged_phone"))
        audit.record(
            session,
            actor=by,
            action="game.abort",
            target_kind="game",
            target_id=game_id,
            now=now,
            detail=f"{before.value} {reason.strip()}",
        )
    if before is GameStatus.LOBBY and charge and host is not None:
        await credit_change(
            sessions, host, charge, "refund: round aborted by an admin", game_id=game_id
        )
    return before
