"""Greeting, identification and the announcer (X1), driven by real keys against a real hub."""

from __future__ import annotations

import pytest

from vollmond.engine.standard import GameOptions
from vollmond.i18n import text
from vollmond.phone.session.codes import invitation_from_phone, phone_code
from vollmond.service.hub import Hub, Owner
from vollmond.settings import IdentitySettings
from vollmond.store import (
    create_account,
    create_phone_identity,
    identify_caller,
    karma_change,
    set_account_pin,
)
from vollmond.worlds import get_world

from .support import call_in, heard, press, said, verified_number, wait_until

RULESETS_DE = (
    "1 Vollmond, zehn Welten; 2 Klassisch: Düsterwald, mit Hauptmann; "
    "3 Bürgermeister*in-Wahl im Thüringer Wald"
)

W = get_world("werwolf")


def t(key: str, **params: object) -> str:
    return text(key, "de", W, **params)  # type: ignore[arg-type]


async def test_greeting_then_identification_choices_for_an_unknown_number(hub: Hub) -> None:
    session = await call_in(hub, "+49301234567")
    lines = said(session)
    assert lines[0] == t("phone.greeting")
    assert lines[1] == t("phone.ident.choices")
    assert session.game_id is None and session.seat is None and not session.spectating
    await press(session, "#9")
    assert said(session)[-1] == t("phone.goodbye") and session.hangup_requested.is_set()
    await session.close()


@pytest.mark.rule("X1")
async def test_a_verified_number_pre_fills_the_id_and_the_pin_signs_in(hub: Hub) -> None:
    account = await create_account(hub.sessions, "Marlene", "correct horse battery staple")
    await set_account_pin(hub.sessions, account.id, "5550")
    await verified_number(hub, account.id, "+49 30 555")
    session = await call_in(hub, "+4930555")
    assert said(session)[1:] == [t("phone.ident.prefilled")]
    assert session.identity_id is None  # not signed in by the number
    await press(session, "5550#")
    assert said(session)[2:4] == [
        t("phone.ident.welcome", name="Marlene"),
        t("phone.menu.choices"),
    ]
    assert session.account_id == account.id
    await session.close()


async def test_pin_sign_in_with_id_and_pin(hub: Hub) -> None:
    identity = await create_phone_identity(hub.sessions, pin="4711")
    session = await call_in(hub)
    await press(session, "1")
    assert heard(session, t("phone.ident.ask_id"))
    await press(session, f"{identity.id}#")
    await press(session, "4711#")
    assert heard(session, "du bist angemeldet")
    assert session.identity_id == identity.id
    assert said(session)[-1] == t("phone.menu.choices")
    assert session.announcer.lobby_game is None
    await session.close()


async def test_wrong_pins_three_times_make_a_guest(hub: Hub) -> None:
    identity = await create_phone_identity(hub.sessions, pin="4711")
    session = await call_in(hub)
    await press(session, "1")
    for _ in range(3):
        await press(session, f"{identity.id}#1234#")
    assert heard(session, t("phone.ident.wrong"))
    assert heard(session, t("phone.ident.too_many"))
    assert session.identity_id is None
    assert heard(session, "Du spielst als Gast")
    await session.close()


async def test_guest(hub: Hub) -> None:
    session = await call_in(hub)
    await press(session, "2")
    assert session.account_id is None and session.name.startswith("Anrufer ")
    assert said(session)[-2] == t("phone.ident.guest", name=session.name)
    assert said(session)[-1] == t("phone.menu.choices")
    await session.close()


async def test_creating_a_phone_identity_by_keypad_then_signing_in_with_it(hub: Hub) -> None:
    session = await call_in(hub, "+49 171 999")
    await press(session, "3")
    await press(session, "12#")  # too short
    assert heard(session, t("phone.ident.pin_invalid"))
    await press(session, "2468#2469#")  # mismatch
    assert heard(session, t("phone.ident.pin_mismatch"))
    await press(session, "2468#2468#")
    assert session.identity_id is not None
    phone_id = str(session.identity_id)
    assert len(phone_id) == IdentitySettings().phone_id_digits  # random, not 1, 2, 3 …
    assert heard(session, f"Deine Telefon-Kennung ist {' '.join(phone_id)}")
    await session.close()
    # The From number was not stored with it: it is no proof and pre-fills nothing.
    assert await identify_caller(hub.sessions, "+49171999") is None
    again = await call_in(hub, "+49171999")
    assert said(again)[-1] == t("phone.ident.choices")
    await press(again, "1")
    await press(again, f"{phone_id}#2468#")
    assert again.identity_id == session.identity_id
    await again.close()


@pytest.mark.rule("X1")
async def test_wrong_keys_get_a_short_error_and_the_valid_choices(hub: Hub) -> None:
    session = await call_in(hub)
    await press(session, "2")
    before = len(said(session))
    await press(session, "9#")  # (6, 7 and 8 are the mailbox's, the friends' and invitations')
    assert said(session, before) == [t("phone.menu.no_choice", n=9), t("phone.help_hint")]
    before = len(said(session))
    await press(session, "*5*")
    assert said(session, before) == [t("phone.keyerror.misplaced_star"), t("phone.help_hint")]
    assert session.transcript[-3].tone == "beep"
    before = len(said(session))
    await press(session, "#2")  # repeat: the last menu block again
    assert said(session, before) == [t("phone.menu.choices")]
    await session.close()


@pytest.mark.rule("X1")
async def test_browse_public_games_per_world_and_join(hub: Hub) -> None:
    founded = await hub.found(GameOptions(players=5), private=False, host_account_id=None)
    session = await call_in(hub)
    await press(session, "2")
    await press(session, "1")
    assert heard(session, "1 Werwolf; 2 Vampir")
    await press(session, "2#")  # Vampir: nothing open
    assert heard(session, "In Vampir wartet gerade kein offener Tisch")
    await press(session, "0#")  # back to the worlds
    await press(session, "1#")
    assert heard(session, "Offene Tische: 1: Wie es kommt, 5 von 5 Plätzen frei")
    await press(session, "1#")
    assert session.game_id == founded.game.id and session.seat is None
    assert heard(session, "Du sitzt. 1 von 5 Plätzen besetzt.")
    before = len(said(session))
    await press(session, "#3")
    assert said(session, before) == [t("phone.menu.lobby_status", taken=1, size=5)]
    await press(session, "#9")
    assert heard(session, t("phone.menu.left_table"))
    assert (await hub.table(founded.game.id)).seats == []
    await session.close()


@pytest.mark.rule("P1", "P2", "X1")
async def test_00_founds_a_private_round_size_checked_and_joined_by_its_number_code(
    hub: Hub,
) -> None:
    host = await call_in(hub)
    await press(host, "2")
    await press(host, "00#")
    assert said(host)[-1] == t("phone.menu.rulesets", list=RULESETS_DE)
    await press(host, "1#")  # the standard rules
    assert heard(host, "Welt wählen: 1 Werwolf")
    assert heard(host, t("phone.menu.more"))  # ten worlds: read in pages of five
    assert not heard(host, "5 Neo")
    await press(host, "99#")
    assert heard(host, "5 Neo")
    await press(host, "1#")
    # A guest is offered only what a guest may found: 4 to 9 (P1, P2).
    size_question = t("phone.menu.ask_size", min=4, max=9)
    assert said(host)[-1] == size_question
    before = len(said(host))
    await press(host, "12#")  # above 9: not offered to a guest
    assert said(host, before) == [size_question, t("phone.help_hint")]
    await press(host, "2#")
    assert said(host)[-2:] == [size_question, t("phone.help_hint")]
    await press(host, "4#")
    assert said(host)[-1] == t("phone.found.start")
    await press(host, "1")  # 1 for the standard settings
    assert host.game_id is not None
    game_id = host.game_id
    founded_line = next(line for line in said(host) if "Zahlencode lautet" in line)
    digits = "".join(ch for ch in founded_line.split("lautet:")[1].split(".")[0] if ch.isdigit())
    assert len(digits) == 16
    assert heard(host, t("phone.menu.lobby_host_keys", min=4))

    guests = []
    for _ in range(2):
        guest = await call_in(hub)
        await press(guest, "2")
        await press(guest, "2")
        await press(guest, "123#")
        assert heard(guest, t("phone.menu.code_length"))
        await press(guest, "9" * 16 + "#")
        assert heard(guest, t("phone.menu.code_unknown"))
        await press(guest, digits + "#")
        assert guest.game_id == game_id
        guests.append(guest)
    table = await hub.table(game_id)
    assert [s.channel for s in table.seats] == ["phone", "phone", "phone"]
    await press(host, "1#")  # only 3 seated: too few
    assert heard(host, t("phone.lobby.too_few_players"))
    last = await call_in(hub)
    await press(last, "2")
    await press(last, "2")
    await press(last, digits + "#")
    for session in (host, *guests, last):
        await wait_until(lambda s=session: s.seat is not None)  # type: ignore[misc]
        assert heard(session, "Deine Hausnummer ist")
        await session.close()


def test_phone_codes_map_invitation_codes_both_ways() -> None:
    for code in ("AAAAAAAAAA", "9999999999", "K7PQ2XR4ZB"):
        digits = phone_code(code)
        assert len(digits) == 16 and digits.isdigit()
        assert invitation_from_phone(digits) == code
    assert invitation_from_phone("9" * 16) is None
    assert invitation_from_phone("123") is None


async def test_join_by_code_is_rate_limited(hub: Hub) -> None:
    session = await call_in(hub)
    await press(session, "2")
    await press(session, "2")
    for _ in range(hub.policy.invitation_attempts_per_minute):
        await press(session, "1" * 16 + "#")
    before = len(said(session))
    await press(session, "1" * 16 + "#")
    assert said(session, before) == [t("phone.menu.code_limit")]
    await session.close()


async def test_a_table_called_off_before_the_start_sends_the_caller_back(hub: Hub) -> None:
    founded = await hub.found(GameOptions(players=5), private=False, host_account_id=None)
    session = await call_in(hub)
    await press(session, "2")
    await press(session, "1")
    await press(session, "1#")
    await press(session, "1#")
    assert session.game_id == founded.game.id
    await hub.abort(founded.game.id)
    await wait_until(lambda: heard(session, t("phone.menu.aborted")), 5)
    assert said(session)[-1] == t("phone.menu.choices")
    assert session.announcer.lobby_game is None
    await session.close()


async def test_an_english_line_speaks_english(hub: Hub) -> None:
    english = get_world("werwolf")
    session = await call_in(hub, lang="en")
    await press(session, "2")
    await press(session, "1")
    assert said(session)[0] == text("phone.greeting", "en", english)
    assert heard(session, "Pick a world: 1 Werewolf; 2 Vampire")
    await session.close()


@pytest.mark.rule("P3", "P5")
async def test_hash_3_in_the_announcer_reads_karma_its_reasons_and_the_unlock(hub: Hub) -> None:
    account = await create_account(hub.sessions, "Karla", "correct horse battery staple")
    await set_account_pin(hub.sessions, account.id, "5551")
    await verified_number(hub, account.id, "+49 30 556")
    await karma_change(hub.sessions, account.id, 10, "game_won")
    await karma_change(hub.sessions, account.id, hub.policy.karma.threshold, "game_stayed")
    await karma_change(hub.sessions, account.id, -5, "moderation: warning")
    session = await call_in(hub, "+4930556")
    await press(session, "5551#")
    await press(session, "#3")
    total = hub.policy.karma.threshold + 5
    items = "; ".join(
        [
            t("phone.menu.karma_item", amount="-5", reason=t("karma.reason.other")),
            t(
                "phone.menu.karma_item",
                amount=f"+{total - 5}",
                reason=t("karma.reason.game_stayed"),
            ),
            t("phone.menu.karma_item", amount="+10", reason=t("karma.reason.game_won")),
        ]
    )
    assert heard(session, t("phone.menu.karma_total", n=total))
    assert heard(session, t("phone.menu.karma_recent", list=items))
    assert heard(session, "bis zum")  # the unlock, with its day
    await session.close()
    guest = await call_in(hub)
    await press(guest, "2")
    await press(guest, "#3")
    assert heard(guest, t("phone.menu.karma_guest"))
    await guest.close()


@pytest.mark.rule("P3", "P5")
async def test_hash_3_reads_a_phone_only_callers_own_karma_and_their_seat_is_theirs(
    hub: Hub,
) -> None:
    """Issue 10: a caller with a phone ID and PIN but no account has a ledger of their own;
    `#3` reads it, and a seat they take carries their phone identity (the booking's owner)."""
    identity = await create_phone_identity(hub.sessions, pin="7373")
    phone = Owner.phone(identity.id)
    await karma_change(hub.sessions, phone, 7, "game_stayed")
    await karma_change(hub.sessions, phone, hub.policy.karma.threshold, "game_won")
    session = await call_in(hub)
    await press(session, "1")
    await press(session, f"{identity.id}#")
    await press(session, "7373#")
    assert session.identity_id == identity.id and session.account_id is None
    await press(session, "#3")
    total = hub.policy.karma.threshold + 7
    assert heard(session, t("phone.menu.karma_total", n=total))
    items = "; ".join(
        [
            t("phone.menu.karma_item", amount=f"+{total - 7}", reason=t("karma.reason.game_won")),
            t("phone.menu.karma_item", amount="+7", reason=t("karma.reason.game_stayed")),
        ]
    )
    assert heard(session, t("phone.menu.karma_recent", list=items))
    assert heard(session, "bis zum")  # its own karma unlocks larger private rounds (P5)
    assert not heard(session, t("phone.menu.karma_guest"))
    founded = await hub.found(GameOptions(players=5), private=False, host_account_id=None)
    await press(session, "1")
    await press(session, "1#")
    await press(session, "1#")
    assert session.game_id == founded.game.id
    seats = (await hub.table(founded.game.id)).seats
    assert [(s.account_id, s.phone_identity_id) for s in seats] == [(None, identity.id)]
    await session.close()
