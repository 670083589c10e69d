"""The `[moderation]` table of the operator's settings file."""

from __future__ import annotations

from pathlib import Path

import pytest

from vollmond.service.config import Settings
from vollmond.settings.moderation import ModerationSettings
from vollmond.settings.toml import ConfigError


def test_moderation_table_sets_limits_and_keeps_defaults(tmp_path: Path) -> None:
    path = tmp_path / "vollmond.toml"
    path.write_text(
        "[moderation]\nmoderator_ban_max_hours = 72\nretention_days = 14\n"
        'vault_key_path = "/etc/vollmond/recordings.key"\n'
    )
    settings = Settings.from_env(path).moderation
    assert (settings.moderator_ban_max_hours, settings.retention_days) == (72, 14)
    assert settings.vault_key_path == "/etc/vollmond/recordings.key"
    assert settings.recording_max_s == ModerationSettings().recording_max_s == 300


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("retention_days = 0", "retention_days must be positive"),
        ("karma_ban = -5", "karma_ban is a deduction"),
        ("ban_forever = true", "unknown key 'ban_forever'"),
    ],
)
def test_bad_moderation_settings_are_refused(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "vollmond.toml"
    path.write_text(f"[moderation]\n{line}\n")
    with pytest.raises(ConfigError, match=message):
        Settings.from_env(path)
