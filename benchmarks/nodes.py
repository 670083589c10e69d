"""Several Vollmond nodes on this machine, as a deployment runs them, for the benchmarks.

`ws_load --nodes N` (web players) and `phone_load --nodes N` (callers) both start N node
processes over NATS with leases (issue 15, docs/deployment.md) on one PostgreSQL database, and
read their CPU and the shared engines' from /proc. The node's command differs — `vollmond
serve` for the web, the phone benchmark's own server for callers, which runs the same
application with its send clock instrumented — but the options a node is given, its keys, its
schema and its namespace are the same, so they are made here once:

- a fresh PostgreSQL schema and NATS namespace per step (:class:`Cluster`), dropped after it: a
  step's games must not resume in the next step's nodes, and a run must not meet the tests'
  nodes on the shared NATS server;
- the first node starts alone (it migrates the schema and makes the keys), the others get a
  copy of its keys (a session or seat token made on one node is read on another);
- each game's owner is read from its lease row (:func:`owners`): the nodes decide it, the
  benchmark does not assume it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx

HOST = "127.0.0.1"
NATS_URL = "nats://127.0.0.1:4222"  # the machine's NATS server
NODE_START_TIMEOUT_S = 120.0
#: The shared engines the nodes lean on, their CPU counted by process name.
ENGINES = ("nats-server", "postgres")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


# -- /proc --------------------------------------------------------------------------------------
def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_busy_s() -> float:
    """CPU seconds all processes of the machine spent busy (every core, from /proc/stat)."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    ticks = [int(x) for x in fields]
    idle = ticks[3] + ticks[4]  # idle + iowait
    return (sum(ticks[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def load_average() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def process_tree(pid: int) -> list[int]:
    """`pid` and its living descendants (`vollmond serve --workers N` runs N children)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    tree, todo = [], [pid]
    while todo:
        current = todo.pop()
        tree.append(current)
        todo.extend(children.get(current, []))
    return tree


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds of a process and its living descendants."""
    total = 0.0
    for member in process_tree(pid):
        with contextlib.suppress(OSError):
            total += cpu_seconds(member)
    return total


def named_cpu_seconds(name: str) -> float:
    """CPU seconds of the living processes called `name` (nats-server, postgres): the shared
    engines the nodes lean on, counted whoever else uses them. A PostgreSQL backend that ends
    inside the window takes its seconds with it; the nodes' pooled connections stay."""
    total = 0.0
    for comm in Path("/proc").glob("[0-9]*/comm"):
        with contextlib.suppress(OSError, ValueError):
            if comm.read_text().strip() == name:
                total += cpu_seconds(int(comm.parent.name))
    return total


def engines_cpu_seconds() -> dict[str, float]:
    return {name: named_cpu_seconds(name) for name in ENGINES}


def memory_mb(pid: int) -> tuple[float, float]:
    """Resident and peak resident memory of a process and its descendants, in MB."""
    values: dict[str, float] = {}
    for member in process_tree(pid):
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{member}/status").read_text().splitlines():
                key, _, rest = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    values[key] = values.get(key, 0.0) + int(rest.split()[0]) / 1024
    return values.get("VmRSS", 0.0), values.get("VmHWM", 0.0)


# -- processes ----------------------------------------------------------------------------------
def wait_healthy(url: str, proc: subprocess.Popen[bytes], timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=2).status_code == 200:
                return
        time.sleep(0.2)
    raise RuntimeError("the server did not become healthy")


def stop_all(procs: Sequence[subprocess.Popen[bytes]]) -> None:
    """SIGINT to all first (they stop side by side), then wait for each; SIGKILL if it hangs."""
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
    for proc in procs:
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


# -- the nodes ----------------------------------------------------------------------------------
def serve_command() -> list[str]:
    """`vollmond serve` of this interpreter's environment."""
    return [str(Path(sys.executable).parent / "vollmond"), "serve"]


@dataclass
class Cluster:
    """Nodes on one PostgreSQL schema and one NATS namespace, both fresh per step (a step's
    games and subjects must not meet another step's or another run's).

    `program` is what a node runs before its options (`vollmond serve`, or a benchmark's
    server that takes the same options); `telephone`: each node answers SIP on a port of its
    own (`sip_ports`), otherwise `--sip-port 0`."""

    count: int
    database_url: str
    nats_url: str = NATS_URL
    program: list[str] = field(default_factory=serve_command)
    telephone: bool = False
    label: str = "ws_load"
    home: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="vollmond-nodes-")))
    tag: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    ports: list[int] = field(default_factory=list)
    sip_ports: list[int] = field(default_factory=list)
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.ports = [free_port() for _ in range(self.count)]
        self.sip_ports = [free_udp_port() if self.telephone else 0 for _ in range(self.count)]

    @property
    def names(self) -> list[str]:
        return [f"n{i + 1}" for i in range(self.count)]

    @property
    def schema(self) -> str:
        return f"{self.label}_{self.tag}"

    @property
    def namespace(self) -> str:
        return f"{self.label.replace('_', '')}{self.tag}"

    @property
    def http_urls(self) -> list[str]:
        return [f"http://{HOST}:{port}" for port in self.ports]

    @property
    def ws_urls(self) -> list[str]:
        return [f"ws://{HOST}:{port}/ws" for port in self.ports]

    def data_dir(self, index: int) -> Path:
        return self.home / self.names[index] / "data"

    def command(self, index: int) -> list[str]:
        """The node's command: leases decide who owns a game (the node that founded it)."""
        return [
            *self.program,
            "--host", HOST,
            "--port", str(self.ports[index]),
            "--data-dir", str(self.data_dir(index)),
            "--sip-port", str(self.sip_ports[index]),
            "--nats-url", self.nats_url,
            "--nats-namespace", self.namespace,
            "--node-id", self.names[index],
            "--nodes", ",".join(self.names),
            "--ownership", "leases",
        ]  # fmt: skip

    def start_node(
        self, index: int, env: dict[str, str], log: Path | None = None, show_log: bool = False
    ) -> subprocess.Popen[bytes]:
        """Start node `index` (its stderr into `log`, to the terminal with `show_log`, or
        nowhere)."""
        stderr = log.open("wb") if log is not None else None if show_log else subprocess.DEVNULL
        proc = subprocess.Popen(
            self.command(index), env=env, stdout=subprocess.DEVNULL, stderr=stderr
        )
        self.procs.append(proc)
        return proc

    @property
    def pids(self) -> list[int]:
        return [proc.pid for proc in self.procs]

    async def start(
        self, config: str | None = None, logs: bool = False, show_log: bool = False
    ) -> None:
        """Make the schema, start the first node (it migrates the schema and makes the keys),
        give the others its keys (nodes share them: sessions, seat tokens), start them, wait
        for all. `config`: an operator file for every node; `logs`: each node's stderr into
        `node.log` beside its data directory."""
        await execute(self.database_url, f'CREATE SCHEMA "{self.schema}"')
        env = dict(os.environ)
        env |= {"DATABASE_URL": self.database_url, "VOLLMOND_DATABASE_SCHEMA": self.schema}
        if config is not None:
            path = self.home / "vollmond.toml"
            path.write_text(config)
            env["VOLLMOND_CONFIG"] = str(path)

        def log(index: int) -> Path | None:
            return self.data_dir(index).parent / "node.log" if logs else None

        self.data_dir(0).mkdir(mode=0o700, parents=True)
        first = self.start_node(0, env, log(0), show_log)
        wait_healthy(self.http_urls[0] + "/healthz", first, NODE_START_TIMEOUT_S)
        for index in range(1, self.count):
            self.data_dir(index).mkdir(mode=0o700, parents=True)
            for key in self.data_dir(0).glob("*.key"):
                shutil.copy2(key, self.data_dir(index) / key.name)
            self.start_node(index, env, log(index), show_log)
        for index in range(1, self.count):
            url = self.http_urls[index] + "/healthz"
            wait_healthy(url, self.procs[index], NODE_START_TIMEOUT_S)

    async def remove(self) -> None:
        """Stop every node, then drop the step's schema and the data directories."""
        stop_all(self.procs)
        with contextlib.suppress(Exception):  # the schema may never have been made
            await execute(self.database_url, f'DROP SCHEMA IF EXISTS "{self.schema}" CASCADE')
        shutil.rmtree(self.home, ignore_errors=True)

    async def owners(self, game_ids: Sequence[str]) -> list[int | None]:
        """Each game's owner node (by index) from its lease row, as the nodes themselves
        decide; None for a game without a lease."""
        from vollmond.store import open_store  # noqa: PLC0415
        from vollmond.store.leases import get_lease  # noqa: PLC0415

        found: list[int | None] = []
        async with open_store(
            self.database_url, schema=self.schema, migrate_to_head=False
        ) as sessions:
            for game_id in game_ids:
                lease = await get_lease(sessions, game_id)
                owner = None if lease is None else lease.owner
                found.append(self.names.index(owner) if owner in self.names else None)
        return found


async def execute(database_url: str, statement: str) -> None:
    """One DDL statement on the scratch database (the step's schema is made and dropped)."""
    from sqlalchemy import text  # noqa: PLC0415 - the client processes need no SQLAlchemy

    from vollmond.store import create_engine  # noqa: PLC0415

    engine = create_engine(database_url)
    try:
        async with engine.begin() as connection:
            await connection.execute(text(statement))
    finally:
        await engine.dispose()
