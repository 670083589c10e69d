"""Start-up: the CPU a `vollmond serve` process spends before it serves (issue 16).

    .venv/bin/python -m benchmarks.startup [--repeats 5] [--workers 1,2] [--json-out F]

Every process that runs the service — `vollmond serve`, each of its `--workers N` worker
processes (spawned: each imports everything again), each node — pays this before its first
request, and the test suite starts many of them. Measured here, as the service is run
(`python -m vollmond.cli serve`, SQLite in a fresh data directory, `--sip-port 0`, from this
checkout), until `/healthz` answers (with workers: each worker's own port, so all are ready):

- cpu_s: the user + system CPU seconds of the whole process tree at that moment (the server,
  its workers and whatever they started, read from /proc, reaped children included);
- wall_s: from the start of the command to that moment.

Each start is measured twice per repeat: "first" on an empty data directory (the migrations
run), then "restart" on the directory it left (the database at the newest schema, as at every
later start). Figures are medians over `--repeats`, after one start of each kind that is not
measured (it writes the bytecode caches, as an installed service has them).

The baseline, measured in the same run: an interpreter doing nothing (`python -c pass`), one
that imports the rules engine (`import vollmond.engine.ruleset`, the floor of any process of
the project), and the imports of the serving path alone (`import vollmond.cli, vollmond.server,
vollmond.workers`, what a serve imports before it starts serving), each the CPU of the child.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import os
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from benchmarks.jsonline import append_json_line

ROOT = Path(__file__).resolve().parents[1]
TICK_S = 1 / os.sysconf("SC_CLK_TCK")
POLL_S = 0.01
READY_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 30.0
PORT_ATTEMPTS = 3
IMPORTS = {
    "python_pass": "pass",
    "import_engine": "import vollmond.engine.ruleset",
    "import_serve_path": "import vollmond.cli, vollmond.server, vollmond.workers",
}


def _env() -> dict[str, str]:
    """The environment without the operator's settings (SQLite in the data directory), and with
    bytecode caches written: a sandbox's PYTHONDONTWRITEBYTECODE=1 would have every start
    compile the package from source, which an installed service does not."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("VOLLMOND_")}
    env.pop("DATABASE_URL", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = str(ROOT)  # this checkout, whatever the virtualenv was installed from
    return env


def import_cpu(code: str) -> float:
    """User + system CPU seconds of a fresh interpreter running `code`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=_env(), check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _children(pid: int) -> list[int]:
    found: list[int] = []
    with contextlib.suppress(FileNotFoundError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(FileNotFoundError):
                text = Path(f"/proc/{pid}/task/{task}/children").read_text()
                found += [int(child) for child in text.split()]
    return found


def tree_cpu(pid: int) -> float:
    """CPU seconds of `pid` and all its descendants, the children they reaped included."""
    total = 0
    pending = [pid]
    while pending:
        current = pending.pop()
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):
            stat = Path(f"/proc/{current}/stat").read_text()
            fields = stat[stat.rindex(")") + 2 :].split()
            # utime, stime, cutime, cstime: fields 14-17 of proc(5), 12-15 after the name
            total += sum(int(fields[i]) for i in (11, 12, 13, 14))
        pending += _children(current)
    return total * TICK_S


def free_ports(count: int) -> int:
    """A base port with `count` free TCP ports from it."""
    while True:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            base: int = probe.getsockname()[1]
        if base + count > 65535:
            continue
        try:
            for port in range(base, base + count):
                with socket.socket() as sock:
                    sock.bind(("127.0.0.1", port))
        except OSError:
            continue
        return base


def _answers(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, http.client.HTTPException, OSError):
        return False  # not yet, or another process's port (the server then exits: see start)


def serve_start(data_dir: Path, workers: int) -> tuple[float, float]:
    """Start `vollmond serve` on `data_dir`, wait until it (every worker) answers /healthz,
    and return (CPU seconds of its process tree, wall seconds) at that moment; then stop it."""
    base = free_ports(1 + workers)
    args = [sys.executable, "-m", "vollmond.cli", "serve", "--data-dir", str(data_dir)]
    args += ["--port", str(base), "--sip-port", "0", "--workers", str(workers)]
    waiting = [base]
    if workers > 1:
        args += ["--worker-port-base", str(base + 1)]
        waiting = [base + 1 + i for i in range(workers)]
    started = time.perf_counter()
    process = subprocess.Popen(
        args, cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while waiting:
            if process.poll() is not None:
                error = process.stderr.read().decode(errors="replace") if process.stderr else ""
                raise RuntimeError(f"vollmond serve exited early:\n{error}")
            if time.monotonic() > deadline:
                raise TimeoutError("vollmond serve not ready in time")
            if _answers(waiting[0]):
                waiting.pop(0)
                continue
            time.sleep(POLL_S)
        wall = time.perf_counter() - started
        return tree_cpu(process.pid), wall
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def start(data_dir: Path, workers: int, *, first: bool) -> tuple[float, float]:
    """`serve_start`, again on other ports when another process took one before the server
    bound it (the ports were only found free a moment before; the server exits then); a
    `first` start again on an empty data directory (the supervisor migrates before it binds)."""
    for _ in range(PORT_ATTEMPTS - 1):
        try:
            return serve_start(data_dir, workers)
        except RuntimeError as exc:
            if "Address already in use" not in str(exc):
                raise
            if first:
                shutil.rmtree(data_dir, ignore_errors=True)
    return serve_start(data_dir, workers)


def measure(workers: int, repeats: int) -> dict[str, dict[str, float]]:
    """Medians of `repeats` first starts and restarts with `workers` worker processes."""
    runs: dict[str, list[tuple[float, float]]] = {"first": [], "restart": []}
    for _ in range(repeats):
        with tempfile.TemporaryDirectory(prefix="vollmond-startup-") as directory:
            data_dir = Path(directory) / "data"
            runs["first"].append(start(data_dir, workers, first=True))
            runs["restart"].append(start(data_dir, workers, first=False))
    return {
        kind: {
            "cpu_s": statistics.median(cpu for cpu, _ in samples),
            "wall_s": statistics.median(wall for _, wall in samples),
        }
        for kind, samples in runs.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--workers", default="1,2", help="worker counts to start, e.g. 1,2")
    parser.add_argument("--json-out", type=Path, help="append one JSON line with the figures")
    args = parser.parse_args()
    counts = [int(count) for count in args.workers.split(",")]
    with tempfile.TemporaryDirectory(prefix="vollmond-startup-") as directory:
        for count in counts:  # not measured: writes the bytecode caches of everything started
            start(Path(directory) / f"warm-up-{count}", count, first=True)
    baseline = {
        name: statistics.median(import_cpu(code) for _ in range(args.repeats))
        for name, code in IMPORTS.items()
    }
    figures: dict[str, Any] = {}
    for count in counts:
        for kind, values in measure(count, args.repeats).items():
            figures[f"workers{count}_{kind}"] = values
    print(f"CPU seconds (user + system), median of {args.repeats}; {os.cpu_count()} cores")
    for name, cpu in baseline.items():
        print(f"  {name:<26}{cpu:>8.2f} s   python -c {IMPORTS[name]!r}")
    print(f"{'vollmond serve':<28}{'cpu s':>8}{'wall s':>9}   (all processes, until /healthz)")
    for name, values in figures.items():
        print(f"  {name:<26}{values['cpu_s']:>8.2f}{values['wall_s']:>9.2f}")
    if args.json_out is not None:
        append_json_line(
            args.json_out,
            "startup",
            figures=figures,
            baseline=baseline,
            parameters={"repeats": args.repeats, "workers": counts, "sip_port": 0},
        )


if __name__ == "__main__":
    main()
