"""Who may see a game: one check for every endpoint that shows one (P1, docs/decisions.md).

A private round is shown only to its seated players — by the signed-in account or by a seat
token; everybody else gets the same 404 as for a game that does not exist, so outsiders
cannot even learn that it exists.
"""

from __future__ import annotations

from vollmond.service.hub import Hub, TableInfo
from vollmond.service.web.edge import ApiError


async def visible_table(
    hub: Hub, game_id: str, account_id: int | None, token: str | None = None
) -> TableInfo:
    """The table of `game_id` if this caller may see it; else `ApiError(404, no_such_game)`."""
    table = await hub.table(game_id)
    if not table.game.private:
        return table
    if account_id is not None and any(s.account_id == account_id for s in table.seats):
        return table
    if token is not None and await hub.seat_for(game_id, token) is not None:
        return table
    raise ApiError(404, "no_such_game")
