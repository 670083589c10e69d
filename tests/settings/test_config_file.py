"""The operator's settings file fills the settings groups and refuses what it does not know."""

from __future__ import annotations

from pathlib import Path

import pytest

from vollmond.service.config import Settings
from vollmond.settings.toml import ConfigError


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "vollmond.toml"
    path.write_text(text)
    return path


def test_file_sets_groups_and_keeps_defaults(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
[policy]
private_default_max = 7
[policy.calls]
max_per_night = 3
[sip]
trusted_proxies = ["10.0.0.2"]
""",
    )
    settings = Settings.from_env(path, port=9000)
    assert settings.policy.private_default_max == 7
    assert settings.policy.calls.max_per_night == 3
    assert settings.policy.calls.max_duration_s == 600.0  # untouched default
    assert settings.sip.trusted_proxies == ("10.0.0.2",)
    assert settings.web.trusted_proxies == ()
    assert settings.port == 9000


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("[polcy]\nprivate_default_max = 7\n", "polcy"),
        ("[policy]\nprivate_default_mxa = 7\n", "private_default_mxa"),
        ("[policy.calls]\nmax_per_nite = 3\n", "max_per_nite"),
        ("[policy]\nprivate_default_max = 'many'\n", "private_default_max"),
        ("[policy\n", "vollmond.toml"),
    ],
)
def test_file_mistakes_are_errors(tmp_path: Path, text: str, names: str) -> None:
    with pytest.raises(ConfigError, match=names):
        Settings.from_env(write(tmp_path, text))


@pytest.mark.rule("X2")
def test_rooms_table_sets_the_conference_room_limits(tmp_path: Path) -> None:
    path = write(tmp_path, "[rooms]\nmax_members = 4\nchat_max_chars = 120\n")
    settings = Settings.from_env(path)
    assert settings.rooms.max_members == 4
    assert settings.rooms.chat_max_chars == 120
    assert settings.rooms.private_per_person == 2  # untouched default
    with pytest.raises(ConfigError, match="max_members"):
        Settings.from_env(write(tmp_path, "[rooms]\nmax_members = 1\n"))


def test_phone_table_sets_the_media_processes_and_their_real_time_priority(
    tmp_path: Path,
) -> None:
    path = write(tmp_path, "[phone]\nmedia_processes = 2\nmedia_priority = 20\n")
    settings = Settings.from_env(path)
    assert (settings.phone.media_processes, settings.phone.media_priority) == (2, 20)
    defaults = Settings.from_env(write(tmp_path, "")).phone
    assert (defaults.media_processes, defaults.media_priority) == (1, 20)  # tried by default
    off = Settings.from_env(write(tmp_path, "[phone]\nmedia_processes = 0\n")).phone
    assert off.media_processes == 0  # in process, as before
    with pytest.raises(ConfigError, match="media_priority"):
        Settings.from_env(write(tmp_path, "[phone]\nmedia_priority = 100\n"))
