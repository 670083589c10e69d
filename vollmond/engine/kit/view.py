"""Projection helpers shared by every rule set's view."""

from __future__ import annotations

from collections.abc import Iterable

from vollmond.engine.core import Event, Viewer


def visible_events(events: Iterable[Event], viewer: Viewer) -> list[Event]:
    """The part of an event stream that `viewer` may receive: each event's audience was
    fixed when it was made, so this is the only filter any channel needs."""
    return [e for e in events if e.audience.includes(viewer)]
