"""The recording notices (O2, O4) of a worker among several.

The table recorder runs where the game's actor runs (its owner), but the players it must tell
may sit on any worker. So what a worker publishes goes to every other worker on
``notice.<game>``, and what the others publish is set here for this worker's watchers (the
sockets of its mirrors): a player on another worker is told as one on the owner. The audio tap
stays with the worker that publishes it: the owner, whose mixer has the relayed lines too.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable
from dataclasses import asdict
from typing import Any

from vollmond.service.notices import (
    FrameSink,
    NoticeStage,
    RecordingNotice,
    RecordingNotices,
)
from vollmond.service.shards.transport import Message, Transport

SUBJECT = "notice"


def notice_json(notice: RecordingNotice | None) -> dict[str, Any] | None:
    if notice is None:
        return None
    data = asdict(notice)
    data["stage"] = notice.stage.value
    data["seats"] = sorted(notice.seats)
    return data


def notice_of(data: dict[str, Any] | None) -> RecordingNotice | None:
    if data is None:
        return None
    fields = dict(data)
    fields["stage"] = NoticeStage(fields["stage"])
    fields["seats"] = frozenset(fields["seats"])
    return RecordingNotice(**fields)


class SharedNotices(RecordingNotices):
    def __init__(self, node: str, transport: Transport) -> None:
        super().__init__()
        self.node = node
        self.transport = transport

    async def follow(self) -> None:
        """Hear the other workers' notices (before this worker serves anyone)."""
        await self.transport.subscribe(f"{SUBJECT}.>", self._on_notice)

    def publish(
        self, game_id: str, notice: RecordingNotice | None, tap: FrameSink | None = None
    ) -> list[Awaitable[object]]:
        acks = super().publish(game_id, notice, tap)
        body = {"from": self.node, "game": game_id, "notice": notice_json(notice)}
        self.transport.publish(f"{SUBJECT}.{game_id}", json.dumps(body).encode())
        return acks

    def _on_notice(self, message: Message) -> None:
        body = json.loads(message.data)
        if body["from"] != self.node:
            super().publish(body["game"], notice_of(body["notice"]))
