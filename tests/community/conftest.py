"""The store on SQLite and the real PostgreSQL, as the store tests have it."""

from tests.store.conftest import engine, sessions, target

__all__ = ["engine", "sessions", "target"]
