"""Browser tests: Debian's chromium driven by Python playwright against a real server process.

Missing chromium or playwright fails the tests (no silent skip): `apt-get install chromium`
and `pip install playwright`; never `playwright install` (it downloads a browser).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Playwright

# Debian's chromium-headless-shell: the same Blink and WebRTC without the browser around them
# (the old headless mode). Under the whole suite it cost a third less CPU than the full browser
# (browser tests on three workers: 160 against 244 CPU seconds). It has no system
# notifications, so the one test of those runs in the full browser (`full_browser`).
CHROMIUM = Path("/usr/lib/chromium/chromium-headless-shell")
FULL_CHROMIUM = Path("/usr/lib/chromium/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="session")
def server_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The data directory of the service the browser tests use (for the operators' CLI)."""
    return tmp_path_factory.mktemp("browser-data")


@pytest.fixture(scope="session")
def server(server_data: Path) -> Iterator[str]:
    """The service in its own process (its own event loop and logs), on a free port."""
    data_dir = server_data
    port = _free_port()
    log = (data_dir / "serve.log").open("wb")
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.browser.serve", str(port), str(data_dir)],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    # A liveness bound, not a speed test: it starts in about 3 s, but at the start of the
    # whole suite every worker imports, migrates and launches Chromium on two cores at once.
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=1) as response:
                if response.status == 200:
                    break
        except OSError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            log.close()
            pytest.fail(f"server did not start; see {data_dir / 'serve.log'}", pytrace=False)
        time.sleep(0.2)
    try:
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def _browser_scope(fixture_name: str, config: pytest.Config) -> Literal["session", "module"]:
    """One Chromium per worker when the run holds only this folder's tests (scripts/test.sh
    runs them on their own): about twenty launches fewer. A run that mixes them with other
    tests keeps one per module: Playwright's sync API keeps an event loop running in this
    thread while it is open, which would break every asyncio test collected after them."""
    here = Path(__file__).resolve().parent
    paths = [Path(arg.split("::", 1)[0]).resolve() for arg in config.args]
    only_here = bool(paths) and all(p == here or here in p.parents for p in paths)
    return "session" if only_here else "module"


@pytest.fixture(scope=_browser_scope)
def playwright() -> Iterator[Playwright]:
    """Python playwright, driving Debian's Chromium (never a downloaded one)."""
    try:
        from playwright.sync_api import sync_playwright  # noqa: PLC0415
    except ImportError:
        pytest.fail(
            "python playwright is missing: .venv/bin/pip install playwright "
            "(never `playwright install`; the tests use Debian's chromium)",
            pytrace=False,
        )
    with sync_playwright() as pw:
        yield pw


def _launched(pw: Playwright, binary: Path, package: str) -> Iterator[Browser]:
    """The browser at `binary` (from Debian's `package`), closed after its fixture's scope."""
    if not binary.exists():
        pytest.fail(f"{binary} is missing: apt-get install {package}", pytrace=False)
    launched = pw.chromium.launch(executable_path=str(binary), args=CHROMIUM_ARGS)
    try:
        yield launched
    finally:
        launched.close()


@pytest.fixture(scope=_browser_scope)
def browser(playwright: Playwright) -> Iterator[Browser]:
    """Debian's Chromium (the headless shell), launched once per worker or per module
    (`_browser_scope`); every player opens a context of its own, so no cookie or storage is
    shared between tests."""
    yield from _launched(playwright, CHROMIUM, "chromium-headless-shell")


@pytest.fixture(scope="module")
def full_browser(playwright: Playwright) -> Iterator[Browser]:
    """The full Chromium, for what the headless shell lacks (system notifications)."""
    yield from _launched(playwright, FULL_CHROMIUM, "chromium")


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
