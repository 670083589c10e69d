"""The mailbox (X3) and friends (X4): messages, friendships and blocks (issue 10).

Revision ID: 0011_mailbox_friends
Revises: 0010_phone_ledgers
Create Date: 2026-12-02

Three new tables; nothing existing changes. Each side of a message, friendship or block is an
account or a phone-only identity, exactly one (the same check as the ledgers' owners).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0011_mailbox_friends"
down_revision: str | Sequence[str] | None = "0010_phone_ledgers"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _one(prefix: str) -> str:
    return f"({prefix}_account_id IS NULL) <> ({prefix}_phone_id IS NULL)"


def _sides(table: str) -> list[Any]:
    items: list[Any] = []
    for prefix in ("to", "from"):
        items += [
            sa.Column(f"{prefix}_account_id", BIG_ID, nullable=True),
            sa.Column(f"{prefix}_phone_id", BIG_ID, nullable=True),
            sa.ForeignKeyConstraint(
                [f"{prefix}_account_id"],
                ["accounts.id"],
                name=op.f(f"fk_{table}_{prefix}_account_id_accounts"),
            ),
            sa.ForeignKeyConstraint(
                [f"{prefix}_phone_id"],
                ["phone_identities.id"],
                name=op.f(f"fk_{table}_{prefix}_phone_id_phone_identities"),
            ),
        ]
    return items


def upgrade() -> None:
    op.create_table(
        "mail_messages",
        sa.Column("id", BIG_ID, autoincrement=True, nullable=False),
        *_sides("mail_messages"),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("body", sa.Text(), nullable=True),
        sa.Column("voice_file", sa.String(64), nullable=True),
        sa.Column("voice_key", sa.LargeBinary(), nullable=True),
        sa.Column("voice_nonce", sa.LargeBinary(), nullable=True),
        sa.Column("duration_ms", sa.Integer(), nullable=False),
        sa.Column("size_bytes", sa.Integer(), nullable=False),
        sa.Column("reply_to", BIG_ID, nullable=True),
        sa.Column("kept", sa.Boolean(), nullable=False),
        sa.Column("read_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(_one("to"), name=op.f("ck_mail_messages_one_recipient")),
        sa.CheckConstraint(_one("from"), name=op.f("ck_mail_messages_one_sender")),
        sa.CheckConstraint("kind IN ('text', 'voice')", name=op.f("ck_mail_messages_known_kind")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_mail_messages")),
    )
    for column in ("to_account_id", "to_phone_id", "created_at"):
        op.create_index(op.f(f"ix_mail_messages_{column}"), "mail_messages", [column])
    for table, checks in (
        ("friendships", ("one_addressee", "one_requester")),
        ("blocks", ("one_blocked", "one_blocker")),
    ):
        extra = [sa.Column("accepted_at", sa.DateTime(timezone=True), nullable=True)]
        op.create_table(
            table,
            sa.Column("id", BIG_ID, autoincrement=True, nullable=False),
            sa.Column("pair", sa.String(48), nullable=False),
            *_sides(table),
            sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
            *(extra if table == "friendships" else []),
            sa.CheckConstraint(_one("to"), name=op.f(f"ck_{table}_{checks[0]}")),
            sa.CheckConstraint(_one("from"), name=op.f(f"ck_{table}_{checks[1]}")),
            sa.PrimaryKeyConstraint("id", name=op.f(f"pk_{table}")),
            sa.UniqueConstraint("pair", name=op.f(f"uq_{table}_pair")),
        )
        op.create_index(op.f(f"ix_{table}_from_account_id"), table, ["from_account_id"])
        op.create_index(op.f(f"ix_{table}_from_phone_id"), table, ["from_phone_id"])
    op.create_index(op.f("ix_friendships_to_account_id"), "friendships", ["to_account_id"])
    op.create_index(op.f("ix_friendships_to_phone_id"), "friendships", ["to_phone_id"])


def downgrade() -> None:
    op.drop_table("blocks")
    op.drop_table("friendships")
    op.drop_table("mail_messages")
