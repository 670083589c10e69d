"""At rest (issue 8): the data directory, the database files and the session key are private.

A real `vollmond serve` (tests/service/process.py) under the usual umask 022, started on a data
directory an older version left world-readable, and real processes racing for the session key.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import stat
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import select

from vollmond.service.config import Settings
from vollmond.store.hashing import invitation_key
from vollmond.store.models import GameRow

from .process import Browser, ServerProcess, serving
from .support import ApiClient, Service


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def process_umask(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Umask:"):
            return int(line.split()[1], 8)
    raise AssertionError("no Umask line in /proc/<pid>/status")


async def test_serve_keeps_its_data_directory_private(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    data.chmod(0o755)  # as an older version (or `mkdir` under umask 022) left it
    old_key = data / "secret.key"
    old_key.write_text("an-old-key-from-before")
    old_key.chmod(0o644)
    server = ServerProcess(data)
    previous = os.umask(0o022)  # the child inherits the usual umask of a login shell
    try:
        async with serving(server):
            browser = Browser(server)
            try:
                await browser.signup("ruth")  # a write: SQLite now has its -wal and -shm
            finally:
                await browser.close()
            assert server.process is not None
            assert process_umask(server.process.pid) == 0o077
            files = {p.name: mode(p) for p in data.iterdir()}
    finally:
        os.umask(previous)
    assert mode(data) == 0o700
    assert files["secret.key"] == 0o600
    assert old_key.read_text() == "an-old-key-from-before"  # tightened, not replaced
    for name in ("vollmond.sqlite3", "vollmond.sqlite3-wal", "vollmond.sqlite3-shm"):
        assert files[name] == 0o600, (name, oct(files[name]))
    assert all(m & 0o077 == 0 for m in files.values()), {k: oct(v) for k, v in files.items()}


async def test_an_old_world_readable_database_is_tightened_at_start(tmp_path: Path) -> None:
    data = tmp_path / "data"
    server = ServerProcess(data)
    async with serving(server):
        pass
    database = data / "vollmond.sqlite3"
    database.chmod(0o644)
    data.chmod(0o755)
    async with serving(server):
        assert mode(database) == 0o600
        assert mode(data) == 0o700


RACER = textwrap.dedent(
    """
    import random, sys, time
    from pathlib import Path
    from vollmond.service.config import Settings
    base, start = Path(sys.argv[1]), float(sys.argv[2])
    rounds, step = int(sys.argv[3]), float(sys.argv[4])
    for n in range(rounds):
        moment = start + n * step + random.random() * 0.0003  # the racers meet at every offset
        while time.time() < moment:  # every racer leaves this spin within microseconds
            pass
        print(Settings(data_dir=base / str(n)).secret_key(), flush=True)
    """
)
RACERS = 3
ROUNDS = 300


def test_processes_starting_at_once_read_one_private_key(tmp_path: Path) -> None:
    """Three processes ask for the key at the same instant, 300 times over (a fresh data
    directory each time): all get the one key that ends up in the file, and it is 0600."""
    start = time.time() + 2.0  # all have imported vollmond by then, and spin
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(tmp_path), str(start), str(ROUNDS), "0.015"],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(RACERS)
    ]
    outputs = [racer.communicate(timeout=120)[0].split("\n") for racer in racers]
    assert all(racer.returncode == 0 for racer in racers)
    split = []
    for n in range(ROUNDS):
        stored = (tmp_path / str(n) / "secret.key").read_text().strip()
        if {out[n].strip() for out in outputs} != {stored}:
            split.append(n)
        assert len(stored) >= 48
        assert mode(tmp_path / str(n) / "secret.key") == 0o600
        assert [p.name for p in (tmp_path / str(n)).iterdir()] == ["secret.key"]  # no leftovers
    assert not split, f"{len(split)} of {ROUNDS} rounds handed out different keys"


def test_an_empty_key_file_is_an_error_not_an_empty_key(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "secret.key").write_text("")
    settings = Settings(data_dir=data)
    try:
        settings.secret_key()
    except ValueError as exc:
        assert "empty" in str(exc)
    else:
        raise AssertionError("an empty key file was accepted")


async def test_a_private_rounds_code_is_stored_as_an_hmac_with_the_service_key(
    service: Service, api: Callable[[], ApiClient]
) -> None:
    host, guest = api(), api()
    await host.signup("hmachost")
    await guest.signup("hmacguest")
    founded = await host.found(size=5, private=True)
    code = str(founded["invitation_code"])
    async with service.hub.sessions() as session:
        stored = await session.scalar(
            select(GameRow.invitation_hash).where(GameRow.id == founded["game"])
        )
    secret = (service.settings.data_dir / "secret.key").read_text().strip()
    normalized = code.casefold().encode()
    assert stored != hashlib.sha256(normalized).hexdigest()  # what a database thief could try
    assert stored == hmac.new(invitation_key(secret), normalized, hashlib.sha256).hexdigest()
    joined = await guest.post("/api/join", {"code": code.lower()})
    assert joined.status_code == 201, joined.text
