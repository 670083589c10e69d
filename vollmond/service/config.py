"""Service settings: command-line options override environment variables override defaults."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from dataclasses import dataclass, field
from pathlib import Path

import structlog

from vollmond.service.policy import Policy
from vollmond.settings import IdentitySettings, PhoneSettings, SipSettings, WebSettings
from vollmond.settings.community import FriendsSettings, MailboxSettings
from vollmond.settings.karma import KarmaSettings
from vollmond.settings.moderation import ModerationSettings
from vollmond.settings.rooms import RoomSettings
from vollmond.settings.toml import ConfigError, load_config, read_group
from vollmond.settings.voice import VoiceSettings

log = structlog.get_logger(__name__)

SECRET_KEY_FILE = "secret.key"
DATABASE_FILE = "vollmond.sqlite3"
#: What the service process creates may be read by its own user only: the data directory holds
#: the session key, the database (accounts, PIN hashes, every game's secrets) and the prompt cache.
PRIVATE_UMASK = 0o077
DIR_MODE = 0o700
FILE_MODE = 0o600

#: The tables of the operator's settings file and the Settings field each one fills.
CONFIG_GROUPS: dict[str, type[object]] = {
    "policy": Policy,
    "sip": SipSettings,
    "phone": PhoneSettings,
    "web": WebSettings,
    "identity": IdentitySettings,
    "moderation": ModerationSettings,
    "voice": VoiceSettings,
    "karma": KarmaSettings,
    "rooms": RoomSettings,
    "mailbox": MailboxSettings,
    "friends": FriendsSettings,
}


@dataclass(frozen=True, slots=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8080
    # 0: no telephone (in-process apps and tests); `vollmond serve` defaults to 5060.
    sip_port: int = 0
    data_dir: Path = Path("data")
    database_url: str | None = None
    # PostgreSQL only: keep every table in this schema (tests isolate themselves this way).
    database_schema: str | None = None
    policy: Policy = field(default_factory=Policy)
    sip: SipSettings = field(default_factory=SipSettings)
    phone: PhoneSettings = field(default_factory=PhoneSettings)
    web: WebSettings = field(default_factory=WebSettings)
    identity: IdentitySettings = field(default_factory=IdentitySettings)
    moderation: ModerationSettings = field(default_factory=ModerationSettings)
    voice: VoiceSettings = field(default_factory=VoiceSettings)
    karma: KarmaSettings = field(default_factory=KarmaSettings)
    rooms: RoomSettings = field(default_factory=RoomSettings)
    mailbox: MailboxSettings = field(default_factory=MailboxSettings)
    friends: FriendsSettings = field(default_factory=FriendsSettings)

    @staticmethod
    def from_env(config: Path | None = None, **overrides: object) -> Settings:
        """Settings from the environment, the operator's file `config` (or
        ``VOLLMOND_CONFIG``) and `overrides` (command-line options), later ones winning."""
        env = os.environ
        values: dict[str, object] = {
            "host": env.get("VOLLMOND_HOST", "127.0.0.1"),
            "port": int(env.get("VOLLMOND_PORT", "8080")),
            "sip_port": int(env.get("VOLLMOND_SIP_PORT", "5060")),
            "data_dir": Path(env.get("VOLLMOND_DATA_DIR", "data")),
            "database_url": env.get("DATABASE_URL") or None,
            "database_schema": env.get("VOLLMOND_DATABASE_SCHEMA") or None,
        }
        config_path = config or env.get("VOLLMOND_CONFIG")
        if config_path:
            values.update(read_config(Path(config_path)))
        values.update({k: v for k, v in overrides.items() if v is not None})
        return Settings(**values)  # type: ignore[arg-type]

    def secure_data_dir(self) -> Path:
        """Make the data directory private to the service's user, before anything is in it.

        Sets the process umask to 077, so every file the service creates later (SQLite's -wal
        and -shm, the prompt cache, anything new) is 0600 from its first byte, and tightens what
        an older version left readable (a 0755 directory, a 0644 database).
        """
        os.umask(PRIVATE_UMASK)
        self.data_dir.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        _tighten(self.data_dir, DIR_MODE)
        for name in (DATABASE_FILE, f"{DATABASE_FILE}-wal", f"{DATABASE_FILE}-shm"):
            path = self.data_dir / name
            if path.exists():
                _tighten(path, FILE_MODE)
        return self.data_dir

    def secret_key(self) -> str:
        """The key that signs session cookies and invitation-code HMACs; made once, kept in
        the data directory, readable by the service's user only.

        The key is written to a file of its own (created with O_EXCL, mode 0600) and then
        linked into place: the name appears atomically with the whole key in it, and a second
        process starting at the same moment either wins that link or reads the winner's key —
        never an empty or half-written file, never a key of its own that the other overwrites.
        """
        self.data_dir.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        path = self.data_dir / SECRET_KEY_FILE
        if not path.exists():
            _create_exclusive(path, secrets.token_urlsafe(48))
        _tighten(path, FILE_MODE)
        key = path.read_text().strip()
        if not key:
            raise ConfigError(f"{path} is empty; remove it and a new key is made at start")
        return key

    def database(self) -> str:
        if self.database_url:
            return self.database_url
        self.data_dir.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        return f"sqlite+aiosqlite:///{(self.data_dir / DATABASE_FILE).resolve()}"


def read_config(path: Path) -> dict[str, object]:
    """The settings groups of the operator's file, each checked (:mod:`vollmond.settings.toml`)."""
    tables = load_config(path)
    unknown = sorted(set(tables) - set(CONFIG_GROUPS))
    if unknown:
        raise ConfigError(f"{path}: unknown tables {unknown}; known: {sorted(CONFIG_GROUPS)}")
    return {name: read_group(table, CONFIG_GROUPS[name], name) for name, table in tables.items()}


def _create_exclusive(path: Path, content: str) -> None:
    """Write `content` to `path` unless it exists: a private file, then an atomic link."""
    partial = path.with_name(f"{path.name}.{os.getpid()}.{secrets.token_hex(4)}.part")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    try:
        with os.fdopen(fd, "w") as out:
            out.write(content)
            out.flush()
            os.fsync(out.fileno())
        with contextlib.suppress(FileExistsError):  # another process made the key first
            os.link(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def _tighten(path: Path, mode: int) -> None:
    """Take group and other permissions away from a file or directory we own."""
    current = stat.S_IMODE(path.stat().st_mode)
    if current & ~mode:
        path.chmod(current & mode)
        log.warning("data_permissions_tightened", path=str(path), was=oct(current))
