"""Endpoints of the browser table (issue 12), kept apart from the lobby and client APIs.

- ``GET /api/errors?lang=de``: every error code with its sentence (`error_catalogue`), so the
  page renders any refusal in its own language.
- ``GET /api/my-games``: the signed-in account's seats in games not yet finished ("Meine
  Spiele" on any device; `account_seats`).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from vollmond.service.hub import Hub
from vollmond.service.web.account_seats import open_seats
from vollmond.service.web.auth import Sessions
from vollmond.service.web.client_api import Guard
from vollmond.service.web.edge import ApiError
from vollmond.service.web.error_catalogue import error_sentences
from vollmond.worlds import LANGUAGES


def _lang(value: str | None) -> str:
    return value if value in LANGUAGES else "de"


class TableApi:
    """The table's own routes; state lives in the hub and the store, never here."""

    def __init__(self, hub: Hub, sessions: Sessions) -> None:
        self.hub = hub
        self.sessions = sessions

    def routes(self, guard: Guard) -> list[Route]:
        return [
            Route("/api/errors", guard(self.errors, csrf=False)),
            Route("/api/my-games", guard(self.my_games, csrf=False)),
        ]

    async def errors(self, request: Request) -> Response:
        lang = _lang(request.query_params.get("lang"))
        return JSONResponse(
            {"lang": lang, "errors": dict(error_sentences(lang))},
            headers={"Cache-Control": "max-age=3600"},
        )

    async def my_games(self, request: Request) -> Response:
        account_id = self.sessions.account_id(request)
        if account_id is None:
            raise ApiError(401, "login_required", "please sign in")
        seats = await open_seats(self.hub, account_id)
        return JSONResponse({"games": [seat.to_json() for seat in seats]})
