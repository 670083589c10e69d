"""Service settings: command-line options override environment variables override defaults."""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from vollmond.service.policy import Policy
from vollmond.settings import IdentitySettings, SipSettings, WebSettings
from vollmond.settings.moderation import ModerationSettings
from vollmond.settings.toml import ConfigError, load_config, read_group

#: The tables of the operator's settings file and the Settings field each one fills.
CONFIG_GROUPS: dict[str, type[object]] = {
    "policy": Policy,
    "sip": SipSettings,
    "web": WebSettings,
    "identity": IdentitySettings,
    "moderation": ModerationSettings,
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
    web: WebSettings = field(default_factory=WebSettings)
    identity: IdentitySettings = field(default_factory=IdentitySettings)
    moderation: ModerationSettings = field(default_factory=ModerationSettings)

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

    def secret_key(self) -> str:
        """The key that signs session cookies; made once and kept in the data directory."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        path = self.data_dir / "secret.key"
        if not path.exists():
            path.write_text(secrets.token_urlsafe(48))
            path.chmod(0o600)
        return path.read_text().strip()

    def database(self) -> str:
        if self.database_url:
            return self.database_url
        self.data_dir.mkdir(parents=True, exist_ok=True)
        return f"sqlite+aiosqlite:///{(self.data_dir / 'vollmond.sqlite3').resolve()}"


def read_config(path: Path) -> dict[str, object]:
    """The settings groups of the operator's file, each checked (:mod:`vollmond.settings.toml`)."""
    tables = load_config(path)
    unknown = sorted(set(tables) - set(CONFIG_GROUPS))
    if unknown:
        raise ConfigError(f"{path}: unknown tables {unknown}; known: {sorted(CONFIG_GROUPS)}")
    return {name: read_group(table, CONFIG_GROUPS[name], name) for name, table in tables.items()}
