"""Declarative base shared by all store tables."""

from __future__ import annotations

from sqlalchemy import MetaData
from sqlalchemy.orm import DeclarativeBase

# Deterministic constraint names: Alembic can only alter or drop what it can name, and SQLite
# batch migrations rebuild tables by these names.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    """Root of the ORM models; its metadata is what Alembic compares migrations against."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)
