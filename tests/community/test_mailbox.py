"""The mailbox (X3) on SQLite and PostgreSQL: text and voice messages between accounts and
phone-only identities, the operators' limits, blocks, keep/delete/reply, retention, and voice
messages encrypted at rest."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from vollmond.moderation.errors import RecordingDamagedError
from vollmond.service.community import Community, CommunityError, find_person
from vollmond.service.hub import Hub
from vollmond.settings.community import MailboxSettings
from vollmond.store import Sessions, create_account, create_phone_identity
from vollmond.store.community import MailKind
from vollmond.store.owners import Owner
from vollmond.store.phone import link_identity
from vollmond.store.types import utcnow

pytestmark = pytest.mark.rule("X3")

LIMITS = MailboxSettings(text_max_chars=40, max_messages=3, voice_max_s=2, sends_per_minute=50)


def tone_pcm(seconds: float, freq: float = 440.0) -> bytes:
    n = np.arange(int(seconds * 8000))
    return (6000 * np.sin(2 * np.pi * freq * n / 8000)).astype("<i2").tobytes()


async def people(sessions: Sessions) -> tuple[Owner, Owner, Owner]:
    anna = await create_account(sessions, "Anna", "password-anna")
    bert = await create_account(sessions, "Bert", "password-bert")
    phone = await create_phone_identity(sessions, pin="1234")
    return Owner.account(anna.id), Owner.account(bert.id), Owner.phone(phone.id)


def community(sessions: Sessions, tmp_path: Path, limits: MailboxSettings = LIMITS) -> Community:
    return Community(Hub(sessions), tmp_path / "data", mailbox=limits)


async def test_a_text_from_the_web_reaches_an_account_and_a_phone_only_identity(
    sessions: Sessions, tmp_path: Path
) -> None:
    anna, bert, phone = await people(sessions)
    mail = community(sessions, tmp_path).mail
    await mail.send_text(anna, bert, "Heute  Abend\nWerwolf?")
    await mail.send_text(anna, phone, "Hallo Telefon")
    (to_bert,) = await mail.inbox(bert)
    assert (to_bert.kind, to_bert.body, to_bert.sender) == (
        MailKind.TEXT,
        "Heute Abend Werwolf?",
        anna,
    )
    assert await mail.unread(bert) == 1
    await mail.read(bert, to_bert.id)
    assert await mail.unread(bert) == 0
    (to_phone,) = await mail.inbox(phone)
    assert to_phone.body == "Hallo Telefon"
    assert await mail.inbox(anna) == []


async def test_a_voice_message_is_sealed_on_disk_and_played_only_to_its_recipient(
    sessions: Sessions, tmp_path: Path
) -> None:
    anna, bert, phone = await people(sessions)
    box = community(sessions, tmp_path)
    pcm = tone_pcm(1.5)
    sent = await box.mail.send_voice(phone, anna, pcm)
    assert sent.kind is MailKind.VOICE and sent.duration_ms == 1500
    files = list((tmp_path / "data" / "mailbox").iterdir())
    assert len(files) == 1
    assert pcm[:4000] not in files[0].read_bytes()  # encrypted at rest
    assert await box.mail.audio(anna, sent.id) == pcm
    with pytest.raises(CommunityError) as other:
        await box.mail.audio(bert, sent.id)
    assert other.value.code == "mail_not_found"
    # Another service key does not open it (the key lives outside the database).
    (tmp_path / "data" / "mailbox.key").unlink()
    stranger = community(sessions, tmp_path)
    with pytest.raises(RecordingDamagedError):
        await stranger.mail.audio(anna, sent.id)
    await box.mail.delete(anna, sent.id)
    assert list((tmp_path / "data" / "mailbox").iterdir()) == []


async def test_the_limits_refuse_with_a_clear_code(sessions: Sessions, tmp_path: Path) -> None:
    anna, bert, _ = await people(sessions)
    mail = community(sessions, tmp_path).mail
    cases = [
        (mail.send_text(anna, bert, "x" * 41), "mail_too_long", {"max": 40}),
        (mail.send_text(anna, bert, " \n "), "mail_empty", {}),
        (mail.send_voice(anna, bert, tone_pcm(2.5)), "mail_too_long_voice", {"max": 2}),
        (mail.send_text(anna, anna, "me"), "mail_self", {}),
    ]
    for attempt, code, params in cases:
        with pytest.raises(CommunityError) as refused:
            await attempt
        assert (refused.value.code, refused.value.params) == (code, params)
    for i in range(3):
        await mail.send_text(anna, bert, f"n{i}")
    with pytest.raises(CommunityError) as full:
        await mail.send_text(anna, bert, "one too many")
    assert full.value.code == "mail_full"
    with pytest.raises(CommunityError) as unknown:
        await find_person(sessions, "Nobody-here")
    assert unknown.value.code == "unknown_person"


async def test_a_sender_is_limited_per_minute(sessions: Sessions, tmp_path: Path) -> None:
    anna, bert, _ = await people(sessions)
    box = community(sessions, tmp_path, MailboxSettings(sends_per_minute=2))
    await box.mail.send_text(anna, bert, "1")
    await box.mail.send_text(anna, bert, "2")
    with pytest.raises(CommunityError) as rate:
        await box.mail.send_text(anna, bert, "3")
    assert rate.value.code == "mail_rate"


async def test_a_blocked_sender_is_not_delivered(sessions: Sessions, tmp_path: Path) -> None:
    anna, bert, phone = await people(sessions)
    box = community(sessions, tmp_path)
    await box.friends.block(bert, anna)
    for attempt in (
        box.mail.send_text(anna, bert, "hallo?"),
        box.mail.send_voice(anna, bert, tone_pcm(0.5)),
    ):
        with pytest.raises(CommunityError) as blocked:
            await attempt
        assert blocked.value.code == "mail_blocked"
    assert await box.mail.inbox(bert) == []
    await box.mail.send_text(phone, bert, "still fine")  # only the blocked one is refused
    await box.friends.unblock(bert, anna)
    await box.mail.send_text(anna, bert, "wieder da")
    assert [m.body for m in await box.mail.inbox(bert)] == ["wieder da", "still fine"]


async def test_keep_delete_reply_and_retention(sessions: Sessions, tmp_path: Path) -> None:
    anna, bert, _ = await people(sessions)
    box = community(sessions, tmp_path, MailboxSettings(retention_days=30))
    first = await box.mail.send_text(anna, bert, "behalten")
    second = await box.mail.send_text(anna, bert, "vergessen")
    await box.mail.keep(bert, first.id)
    reply = await box.mail.reply_text(bert, second.id, "Antwort")
    assert (reply.recipient, reply.sender, reply.reply_to) == (anna, bert, second.id)
    expired = await box.mail.expire(utcnow() + timedelta(days=31))
    assert expired == 2  # "vergessen" and the reply; the kept one stays
    assert [m.body for m in await box.mail.inbox(bert)] == ["behalten"]
    await box.mail.delete(bert, first.id)
    assert await box.mail.inbox(bert) == []
    with pytest.raises(CommunityError) as gone:
        await box.mail.delete(bert, first.id)
    assert gone.value.code == "mail_not_found"


async def test_a_phone_id_linked_to_an_account_is_that_accounts_mailbox(
    sessions: Sessions, tmp_path: Path
) -> None:
    anna, bert, phone = await people(sessions)
    box = community(sessions, tmp_path)
    await box.mail.send_text(bert, phone, "vorher")  # before the link: the phone's own box
    assert phone.phone_id is not None and anna.account_id is not None
    await link_identity(sessions, phone.phone_id, anna.account_id)
    await box.mail.send_text(bert, await find_person(sessions, str(phone.phone_id)), "nachher")
    assert [m.body for m in await box.mail.inbox(anna)] == ["nachher", "vorher"]
