"""`vollmond admin ...` against a real SQLite file and PostgreSQL schema, through typer's
CliRunner, exactly as an operator's script would call it."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from tests.store.support import Target
from vollmond.cli import app
from vollmond.moderation import WEB, Caller, Denied, Moderation, Subject
from vollmond.moderation.audit import audit_log
from vollmond.store import (
    Role,
    Sessions,
    active_grants,
    create_account,
    credit_balance,
    get_account,
    has_premium,
    karma_total,
    verify_password,
    verify_pin,
)
from vollmond.store.owners import Owner
from vollmond.store.types import utcnow

from .conftest import People, phone_identity


class Cli:
    """Runs `vollmond ...` in a worker thread (the command starts its own event loop) with the
    environment a deployment would give it."""

    def __init__(self, target: Target, data_dir: Path) -> None:
        self.env = {"VOLLMOND_DATA_DIR": str(data_dir), "DATABASE_URL": target.url}
        if target.schema is not None:
            self.env["VOLLMOND_DATABASE_SCHEMA"] = target.schema

    async def __call__(self, *args: str, input: str | None = None) -> Result:
        runner = CliRunner(env=self.env)
        return await asyncio.to_thread(runner.invoke, app, list(args), input=input)


def ok(result: Result) -> str:
    assert result.exit_code == 0, (result.output, result.exception)
    return result.output


def refused(result: Result, message: str) -> None:
    assert result.exit_code == 1, result.output
    assert message in result.stderr
    assert "Traceback" not in result.output + result.stderr


@pytest.fixture
def cli(target: Target, tmp_path: Path) -> Cli:
    return Cli(target, tmp_path / "data")


@pytest.mark.rule("O5")
async def test_ban_unban_and_bans(
    cli: Cli, moderation: Moderation, sessions: Sessions, people: People
) -> None:
    phone = await phone_identity(sessions, number="+49301234567")
    refused(
        await cli("admin", "ban", "Alice", "--area", "web", "--reason", "Spam", "--by", "Mo"),
        "admins only",
    )
    refused(
        await cli(
            "admin", "ban", "Alice", "--area", "all", "--reason", "x", "--hours", "1", "--by", "Mo"
        ),
        "admins only",
    )
    ok(
        await cli(
            "admin",
            "ban",
            "Alice",
            "--area",
            "web",
            "--reason",
            "Spam",
            "--hours",
            "12",
            "--by",
            "Mo",
        )
    )
    ok(
        await cli(
            "admin",
            "ban",
            "tel:+49 30 1234567",
            "--area",
            "all",
            "--reason",
            "Betrug",
            "--by",
            "Ada",
        )
    )
    listed = json.loads(ok(await cli("admin", "bans", "--json")))
    assert [(b["subject"], b["area"], b["reason"]) for b in listed] == [
        (f"phone:{phone}", "all", "Betrug"),
        (f"account:{people.alice}", "web", "Spam"),
    ]
    assert listed[0]["expires"] == "permanent"
    denied = await moderation.access(Subject.account(people.alice), WEB)
    assert isinstance(denied, Denied)
    assert denied.reason == "Spam"
    assert denied.expires_at is not None
    assert timedelta(hours=11) < denied.expires_at - utcnow() <= timedelta(hours=12)

    refused(await cli("admin", "unban", str(listed[0]["id"]), "--by", "Mo"), "admins only")
    ok(await cli("admin", "unban", str(listed[1]["id"]), "--by", "Mo"))
    assert await moderation.access(Subject.account(people.alice), WEB) is not denied
    assert [b["id"] for b in json.loads(ok(await cli("admin", "bans", "--json")))] == [
        listed[0]["id"]
    ]
    assert len(json.loads(ok(await cli("admin", "bans", "Alice", "--all", "--json")))) == 1


async def test_bad_input_is_one_clear_line(cli: Cli, people: People) -> None:
    refused(
        await cli("admin", "ban", "Nobody", "--area", "web", "--reason", "x", "--by", "Ada"),
        "no account named 'Nobody'",
    )
    refused(
        await cli("admin", "ban", "Alice", "--area", "moon", "--reason", "x", "--by", "Ada"),
        "unknown area 'moon'",
    )
    refused(await cli("admin", "unban", "999", "--by", "Ada"), "sanction 999 does not exist")
    refused(
        await cli("admin", "ban", "Alice", "--area", "web", "--reason", " ", "--by", "Ada"),
        "needs a reason",
    )


@pytest.mark.rule("O1")
async def test_alarms_lists_the_queue(
    cli: Cli, moderation: Moderation, people: People, game_id: str
) -> None:
    alarm = await moderation.raise_alarm(
        game_id=game_id,
        round=3,
        phase="vote",
        caller=Caller(account_id=people.bob, house=2),
        reason=2,
        accused_house=7,
    )
    rows = json.loads(ok(await cli("admin", "alarms", "--json")))
    assert [
        (r["id"], r["game"], r["round"], r["phase"], r["house"], r["reason"], r["accused"])
        for r in rows
    ] == [(alarm.id, game_id, 3, "vote", 2, 2, 7)]
    assert "alarms (1)" in ok(await cli("admin", "alarms"))


async def test_set_role_is_for_admins_and_audited(
    cli: Cli, sessions: Sessions, people: People
) -> None:
    refused(await cli("admin", "set-role", "Bob", "moderator", "--by", "Mo"), "may not")
    ok(await cli("admin", "set-role", "Bob", "moderator", "--by", "Ada"))
    assert (await get_account(sessions, people.bob)).role is Role.MODERATOR
    refused(await cli("admin", "set-role", "Ada", "player", "--by", "Ada"), "last admin")
    entries = await audit_log(sessions, target_kind="account")
    assert [(e.actor_account_id, e.action, e.detail) for e in entries] == [
        (people.admin, "account.role", "player -> moderator")
    ]


async def test_grants(cli: Cli, sessions: Sessions, people: People) -> None:
    ok(
        await cli(
            "admin",
            "grant",
            "premium",
            "Alice",
            "--days",
            "30",
            "--reason",
            "Spende",
            "--by",
            "Ada",
        )
    )
    ok(await cli("admin", "grant", "credit", "Alice", "120", "--reason", "Kauf", "--by", "Ada"))
    ok(
        await cli(
            "admin", "grant", "karma", "Alice", "--reason", "Korrektur", "--by", "Ada", "--", "-15"
        )
    )
    ok(
        await cli(
            "admin", "grant", "private_seats", "Alice", "24", "--reason", "Verein", "--by", "Ada"
        )
    )
    refused(
        await cli("admin", "grant", "credit", "Alice", "5", "--reason", "x", "--by", "Mo"),
        "may not",
    )
    now = utcnow()
    assert await has_premium(sessions, people.alice, now)
    assert await credit_balance(sessions, people.alice) == 120
    assert await karma_total(sessions, people.alice) == -15
    assert [(g.name, g.value) for g in await active_grants(sessions, people.alice, now)] == [
        ("private_seats", 24)
    ]
    actions = [e.action for e in await audit_log(sessions, target_kind="account")]
    assert sorted(actions) == [
        "grant.credit",
        "grant.karma",
        "grant.premium",
        "grant.private_seats",
    ]


async def test_grants_to_a_phone_only_caller_and_through_a_linked_number(
    cli: Cli, sessions: Sessions, people: People
) -> None:
    caller = await phone_identity(sessions, number="+4930555777")
    linked = await phone_identity(sessions, number="+4930555888", account_id=people.bob)
    ok(
        await cli(
            "admin", "grant", "credit", "tel:+4930555777", "40", "--reason", "Kauf", "--by", "Ada"
        )
    )
    ok(
        await cli(
            "admin",
            "grant",
            "premium",
            f"phone:{caller}",
            "--days",
            "7",
            "--reason",
            "Spende",
            "--by",
            "Ada",
        )
    )
    # A number linked to an account books to the account, like a penalty.
    ok(
        await cli(
            "admin", "grant", "karma", "tel:+4930555888", "9", "--reason", "Dank", "--by", "Ada"
        )
    )
    assert await credit_balance(sessions, Owner.phone(caller)) == 40
    assert await has_premium(sessions, Owner.phone(caller), utcnow())
    assert await karma_total(sessions, people.bob) == 9
    assert await karma_total(sessions, Owner.phone(linked)) == 0
    audited = await audit_log(sessions, target_kind="phone")
    assert sorted((e.action, e.target_id) for e in audited) == [
        ("grant.credit", str(caller)),
        ("grant.premium", str(caller)),
    ]
    refused(
        await cli("admin", "grant", "credit", "phone:999999", "1", "--reason", "x", "--by", "Ada"),
        "999999",
    )


async def test_reset_password_and_pin(cli: Cli, sessions: Sessions) -> None:
    await create_account(sessions, "Root", "old secret!", role=Role.ADMIN)
    carol = await create_account(sessions, "Carol", "forgotten1")
    phone = await phone_identity(sessions, number="0301111", pin="1234")
    ok(
        await cli(
            "admin",
            "reset-password",
            "Carol",
            "--by",
            "Root",
            input="brand new pass\nbrand new pass\n",
        )
    )
    assert (await verify_password(sessions, "Carol", "brand new pass")) is not None
    assert (await verify_password(sessions, "Carol", "forgotten1")) is None
    ok(await cli("admin", "reset-pin", "tel:0301111", "--by", "Root", input="9876\n9876\n"))
    assert await verify_pin(sessions, phone, "9876")
    refused(
        await cli("admin", "reset-pin", "Carol", "--by", "Root", input="9876\n9876\n"),
        "tel:<number>",
    )
    actions = [(e.action, e.target_id) for e in await audit_log(sessions)]
    assert actions == [
        ("phone.reset_pin", str(phone)),
        ("account.reset_password", str(carol.id)),
    ]


@pytest.mark.rule("O3")
async def test_recordings_commands(
    cli: Cli,
    moderation: Moderation,
    sessions: Sessions,
    people: People,
    game_id: str,
    tmp_path: Path,
) -> None:
    writer = await moderation.start_recording(room="market", game_id=game_id)
    writer.write_audio(b"\x01\x02" * 8000)
    writer.write_chat("Haus 2", "Hilfe")
    await moderation.finish_recording(writer)
    rid = writer.recording_id

    refused(await cli("admin", "recordings", "list", "--by", "Mo"), "may not")
    refused(
        await cli("admin", "recordings", "export", rid, str(tmp_path / "m.wav"), "--by", "Mo"),
        "may not",
    )
    assert not (tmp_path / "m.wav").exists()
    listed = json.loads(ok(await cli("admin", "recordings", "list", "--json", "--by", "Ada")))
    assert [(r["id"], r["game"], r["room"]) for r in listed] == [(rid, game_id, "market")]
    ok(await cli("admin", "recordings", "hold", rid, "--reason", "Fall 3", "--by", "Ada"))
    held = json.loads(ok(await cli("admin", "recordings", "list", "--json", "--by", "Ada")))
    assert held[0]["hold"] == "Fall 3"
    ok(await cli("admin", "recordings", "release", rid, "--by", "Ada"))
    ok(await cli("admin", "recordings", "export", rid, str(tmp_path / "out.wav"), "--by", "Ada"))
    assert (tmp_path / "out.wav").read_bytes().endswith(b"\x01\x02" * 8000)
    assert "Haus 2: Hilfe" in (tmp_path / "out.chat.txt").read_text()
    trail = [
        (e.actor_account_id, e.action)
        for e in reversed(await audit_log(sessions, target_kind="recording"))
    ]
    assert trail == [
        (None, "recording.start"),
        (people.moderator, "recording.list.refused"),
        (people.moderator, "recording.export.refused"),
        (people.admin, "recording.list"),
        (people.admin, "recording.hold"),
        (people.admin, "recording.list"),
        (people.admin, "recording.release"),
        (people.admin, "recording.export"),
    ]
