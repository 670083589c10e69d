"""The operators' `[mailbox]` and `[friends]` tables (X3, X4): read from the settings file,
defaults kept, mistakes refused with the table and key named."""

from __future__ import annotations

from pathlib import Path

import pytest

from vollmond.service.config import Settings
from vollmond.settings.toml import ConfigError


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "vollmond.toml"
    path.write_text(text)
    return path


@pytest.mark.rule("X3", "X4")
def test_the_mailbox_and_friends_limits_come_from_the_file(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "[mailbox]\nvoice_max_s = 30\nmax_messages = 10\nretention_days = 7\n"
        "[friends]\ninvitation_ttl_s = 120\n",
    )
    settings = Settings.from_env(path)
    assert (settings.mailbox.voice_max_s, settings.mailbox.max_messages) == (30, 10)
    assert settings.mailbox.retention_days == 7
    assert settings.mailbox.text_max_chars == 1000  # untouched default
    assert settings.friends.invitation_ttl_s == 120
    assert settings.friends.max_friends == 200


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("[mailbox]\nvoice_max = 30\n", "voice_max"),
        ("[mailbox]\nvoice_max_s = 0\n", "voice_max_s"),
        ("[mailbox]\nretention_days = -1\n", "retention_days"),
        ("[friends]\nmax_friends = 0\n", "max_friends"),
    ],
)
def test_mistakes_in_the_community_tables_are_errors(tmp_path: Path, text: str, names: str) -> None:
    with pytest.raises(ConfigError, match=names):
        Settings.from_env(write(tmp_path, text))
