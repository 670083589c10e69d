"""The live recording's setting in `[moderation]` (docs/security.md "Recording at the table")."""

from __future__ import annotations

from pathlib import Path

import pytest

from vollmond.service.config import Settings
from vollmond.settings.toml import ConfigError


def test_the_notice_wait_is_read_and_defaults_to_45_seconds(tmp_path: Path) -> None:
    path = tmp_path / "vollmond.toml"
    path.write_text("[moderation]\nrecording_notice_wait_s = 12.5\n")
    assert Settings.from_env(path).moderation.recording_notice_wait_s == 12.5
    path.write_text("[moderation]\n")
    assert Settings.from_env(path).moderation.recording_notice_wait_s == 45.0


def test_a_notice_wait_of_zero_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "vollmond.toml"
    path.write_text("[moderation]\nrecording_notice_wait_s = 0\n")
    with pytest.raises(ConfigError, match="recording_notice_wait_s must be positive"):
        Settings.from_env(path)
