"""The engine stays pure (DESIGN §1, §6): an AST scan of every module under vollmond/engine.

Forbidden in engine code, each failure naming file and line:

- importing any module in FORBIDDEN_IMPORTS (I/O, clocks, threads, the store, the channels);
- hidden chance: `from random import <function>`, `random.<function>(...)` on the module (a
  `random.Random` instance passed in is the only allowed source), and `random.Random()` without
  a seed (seeded from the operating system);
- naming role ids: `RoleId.X` (or an alias such as `R = RoleId`) anywhere outside the role
  modules, the deck lists and the enum itself (ROLE_ID_HOMES), and comparing anything with a
  role id's string value ("evil", "seer", ...). Rules ask role *properties*, never names.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from vollmond.engine.ruleset import ruleset_ids
from vollmond.engine.standard.types import RoleId

ROOT = Path(__file__).resolve().parents[1]
ENGINE = ROOT / "vollmond" / "engine"

FORBIDDEN_IMPORTS = (
    "asyncio",
    "socket",
    "selectors",
    "ssl",
    "http",
    "urllib",
    "subprocess",
    "multiprocessing",
    "concurrent",
    "threading",
    "datetime",
    "time",
    "secrets",
    "uuid",
    "sqlalchemy",
    "alembic",
    "aiosqlite",
    "asyncpg",
    "starlette",
    "uvicorn",
    "vollmond.store",
    "vollmond.phone",
    "vollmond.web",
    "vollmond.service",
    "vollmond.bots",
    "vollmond.sim",
    "vollmond.cli",
)
RANDOM_ALLOWED = frozenset({"Random"})
"""From the `random` module only the class may be named; its instances come in as arguments."""

ROLE_ID_HOMES = ("vollmond/engine/standard/roles/", "vollmond/engine/standard/decks.py")
ROLE_ID_ENUM = "vollmond/engine/standard/types.py"
ROLE_VALUES = frozenset(r.value for r in RoleId)


@dataclass(frozen=True, slots=True)
class Violation:
    path: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


def engine_modules() -> list[Path]:
    return sorted(ENGINE.rglob("*.py"))


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _forbidden(module: str) -> str | None:
    for name in FORBIDDEN_IMPORTS:
        if module == name or module.startswith(name + "."):
            return name
    return None


def _absolute(path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = path.relative_to(ROOT).with_suffix("").parts[: -node.level]
    return ".".join((*package, *([node.module] if node.module else [])))


def import_violations(path: Path, tree: ast.AST) -> Iterator[Violation]:
    rel = _rel(path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _forbidden(alias.name):
                    yield Violation(rel, node.lineno, f"imports {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(path, node)
            for alias in node.names:
                full = f"{module}.{alias.name}"
                if _forbidden(module) or _forbidden(full):
                    yield Violation(rel, node.lineno, f"imports {full}")
                if module == "random" and alias.name not in RANDOM_ALLOWED:
                    yield Violation(
                        rel, node.lineno, f"imports random.{alias.name} (hidden chance)"
                    )


def random_violations(path: Path, tree: ast.AST) -> Iterator[Violation]:
    rel = _rel(path)
    names = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
        if alias.name == "random"
    }
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in names
            and node.attr not in RANDOM_ALLOWED
        ):
            yield Violation(rel, node.lineno, f"uses random.{node.attr} (the global generator)")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in names
            and node.func.attr == "Random"
            and not node.args
            and not node.keywords
        ):
            yield Violation(rel, node.lineno, "random.Random() without a seed")


def _role_id_aliases(tree: ast.AST) -> set[str]:
    """`RoleId`, names it is imported as, and names assigned from those (`R = RoleId`)."""
    aliases = {"RoleId"}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            aliases |= {a.asname for a in node.names if a.name == "RoleId" and a.asname}
    assigns = [
        (node.targets, node.value.id)
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name)
    ]
    grown = True
    while grown:
        before = len(aliases)
        for targets, source in assigns:
            if source in aliases:
                aliases |= {t.id for t in targets if isinstance(t, ast.Name)}
        grown = len(aliases) > before
    return aliases


def role_id_violations(path: Path, tree: ast.AST) -> Iterator[Violation]:
    rel = _rel(path)
    if rel == ROLE_ID_ENUM:
        return
    at_home = any(rel.startswith(home) for home in ROLE_ID_HOMES)
    aliases = _role_id_aliases(tree)
    for node in ast.walk(tree):
        if (
            not at_home
            and isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
            and node.attr.isupper()
        ):
            yield Violation(rel, node.lineno, f"names role {node.value.id}.{node.attr}")
        if isinstance(node, ast.Compare):
            for operand in (node.left, *node.comparators):
                if isinstance(operand, ast.Constant) and operand.value in ROLE_VALUES:
                    yield Violation(rel, node.lineno, f"compares with role name {operand.value!r}")
        if (
            isinstance(node, ast.MatchValue)
            and isinstance(node.value, ast.Constant)
            and node.value.value in ROLE_VALUES
        ):
            yield Violation(rel, node.lineno, f"matches role name {node.value.value!r}")


def scan(path: Path) -> list[Violation]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [
        *import_violations(path, tree),
        *random_violations(path, tree),
        *role_id_violations(path, tree),
    ]


def test_the_scan_covers_the_engine() -> None:
    modules = {_rel(p) for p in engine_modules()}
    assert "vollmond/engine/core.py" in modules
    assert "vollmond/engine/standard/rules.py" in modules
    assert any(m.startswith("vollmond/engine/standard/roles/") for m in modules)


@pytest.mark.parametrize("path", engine_modules(), ids=_rel)
def test_engine_module_is_pure(path: Path) -> None:
    violations = sorted(scan(path), key=lambda v: v.line)
    assert not violations, "engine purity (DESIGN §1):\n" + "\n".join(map(str, violations))


BAD_MODULE = """
import asyncio
import random as rnd
from datetime import datetime
from random import choice
from vollmond.store import db
from vollmond import phone
from vollmond.engine.standard.types import RoleId as Roles

Q = Roles

def pick(xs, rng):
    rnd.shuffle(xs)
    fresh = rnd.Random()
    seeded = rnd.Random("key")
    if xs[0].role is Q.SEER or xs[0].role.value == "witch":
        return choice(xs)
    match xs[1].role.value:
        case "hunter":
            return None
    return rng.choice(xs)
"""


def test_the_scan_finds_every_kind_of_violation(tmp_path: Path) -> None:
    """The checks can fail: a module breaking each rule is reported line by line."""
    bad = ENGINE / "standard" / "_architecture_probe.py"
    tree = ast.parse(BAD_MODULE)
    found = [
        *import_violations(bad, tree),
        *random_violations(bad, tree),
        *role_id_violations(bad, tree),
    ]
    lines = sorted({(v.line, v.what) for v in found})
    assert lines == [
        (2, "imports asyncio"),
        (4, "imports datetime.datetime"),
        (5, "imports random.choice (hidden chance)"),
        (6, "imports vollmond.store.db"),
        (7, "imports vollmond.phone"),
        (13, "uses random.shuffle (the global generator)"),
        (14, "random.Random() without a seed"),
        (16, "compares with role name 'witch'"),
        (16, "names role Q.SEER"),
        (19, "matches role name 'hunter'"),
    ]
    assert str(found[0]).startswith("vollmond/engine/standard/_architecture_probe.py:2: ")


# --- the rule-set seam and the layers (issue 14, DESIGN §7) ------------------------------
#
# Outside a rule set's own package, code speaks to rule sets only through the protocol and
# registry in `vollmond/engine/ruleset.py` (which imports them by name, on first use). The
# service does not reach into the telephone, and the telephone does not reach into the store:
# `vollmond/server.py` assembles the program and hands each part what it needs.

PACKAGE = ROOT / "vollmond"
RULESET_IDS = ruleset_ids()
LAYERS = (("vollmond/service/", "vollmond.phone"), ("vollmond/phone/", "vollmond.store"))
"""(modules under this path, may not import this package)."""

SEAM_DEBT: frozenset[tuple[str, str]] = frozenset()
"""Known imports across the seam, each with its reason: the list may only shrink (issue 14
paid the last: the phone's game line, the custom-deck check and the recorder now speak the
protocol). A new one fails `test_no_module_crosses_the_seam`; a fixed one fails
`test_the_seam_debt_is_current` until it is removed here."""


def _home_ruleset(rel: str) -> str | None:
    parts = rel.split("/")
    if parts[:2] == ["vollmond", "engine"] and len(parts) > 3 and parts[2] in RULESET_IDS:
        return parts[2]
    return None


def _imported_modules(path: Path, tree: ast.AST) -> Iterator[tuple[int, str]]:
    """Every module a file imports, also inside functions and `if TYPE_CHECKING:`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(path, node)
            yield node.lineno, module
            for alias in node.names:
                yield node.lineno, f"{module}.{alias.name}"


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def seam_crossings(path: Path, tree: ast.AST) -> set[tuple[str, str, int]]:
    """(file, forbidden package, line) for each import across the seam or a layer."""
    rel = _rel(path)
    home = _home_ruleset(rel)
    found: set[tuple[str, str, int]] = set()
    for line, module in _imported_modules(path, tree):
        for ruleset in RULESET_IDS:
            package = f"vollmond.engine.{ruleset}"
            if ruleset != home and _within(module, package):
                found.add((rel, package, line))
        for prefix, package in LAYERS:
            if rel.startswith(prefix) and _within(module, package):
                found.add((rel, package, line))
    return found


def package_modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _all_crossings() -> set[tuple[str, str, int]]:
    found: set[tuple[str, str, int]] = set()
    for path in package_modules():
        found |= seam_crossings(path, ast.parse(path.read_text(encoding="utf-8")))
    return found


def test_no_module_crosses_the_seam() -> None:
    new = sorted(c for c in _all_crossings() if (c[0], c[1]) not in SEAM_DEBT)
    assert not new, "imports across the rule-set seam or a layer:\n" + "\n".join(
        f"{rel}:{line}: imports {package}" for rel, package, line in new
    )


def test_the_seam_debt_is_current() -> None:
    """Every entry of SEAM_DEBT still happens: a fixed crossing is struck off the list."""
    still = {(rel, package) for rel, package, _ in _all_crossings()}
    assert still >= SEAM_DEBT, f"no longer imported, remove from SEAM_DEBT: {SEAM_DEBT - still}"


SEAM_PROBE = """
from vollmond.engine.ruleset import get_ruleset
from vollmond.engine.standard.types import Phase
from vollmond.phone.service import start_phone
import vollmond.engine.mayor.rules

def late():
    from vollmond.engine.classic import rules
"""


def test_the_seam_scan_finds_crossings() -> None:
    """The check can fail: each kind of crossing is found where it is forbidden, and a rule
    set's own package may import itself (but no other rule set)."""
    tree = ast.parse(SEAM_PROBE)
    service = seam_crossings(PACKAGE / "service" / "probe.py", tree)
    assert sorted((p, line) for _, p, line in service) == [
        ("vollmond.engine.classic", 8),
        ("vollmond.engine.mayor", 5),
        ("vollmond.engine.standard", 3),
        ("vollmond.phone", 4),
    ]
    mayor = seam_crossings(ENGINE / "mayor" / "probe.py", tree)
    assert sorted(p for _, p, _ in mayor) == ["vollmond.engine.classic", "vollmond.engine.standard"]


# --- what a serving process imports (issue 16) --------------------------------------------
#
# Every `vollmond serve`, each of its workers and each node pays its imports before its first
# request, and the suite starts many of them. What a feature alone needs is imported where the
# feature starts: aiortc and PyAV with the first browser voice peer, Alembic when a migration
# runs, the telephone when a SIP port is served (docs/decisions.md, "Start-up").

NOT_AT_START = ("aiortc", "av", "aioice", "alembic", "vollmond.voice.webrtc", "vollmond.phone")

SERVE_AND_REPORT = """
import asyncio, json, sys
from pathlib import Path

import vollmond.cli, vollmond.server, vollmond.workers
from vollmond.server import build_app
from vollmond.service.config import Settings

settings = Settings.from_env(None, port=0, sip_port=0, data_dir=Path(sys.argv[1]))
app = build_app(settings)


async def start_and_stop() -> None:
    async with app.router.lifespan_context(app):
        pass


asyncio.run(start_and_stop())
loaded = [name for name in json.loads(sys.argv[3]) if name in sys.modules]
Path(sys.argv[2]).write_text(json.dumps(loaded))
"""


def _fresh_interpreter(code: str, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VOLLMOND_")}
    env.pop("DATABASE_URL", None)
    env["PYTHONPATH"] = str(ROOT)  # this checkout, whichever the virtualenv was installed from
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def _served_with(tmp_path: Path, data_dir: Path) -> list[str]:
    """Which of NOT_AT_START a fresh interpreter had imported after it imported what `vollmond
    serve` imports and started and stopped the service (web only) on `data_dir`."""
    out = tmp_path / "loaded.json"
    _fresh_interpreter(SERVE_AND_REPORT, str(data_dir), str(out), json.dumps(NOT_AT_START))
    loaded: list[str] = json.loads(out.read_text())
    return loaded


def test_a_serving_process_imports_no_feature_before_it_is_used(tmp_path: Path) -> None:
    """The first start migrates (Alembic, as it must); a restart on the migrated database and
    a web-only service import neither Alembic, nor aiortc and PyAV, nor the telephone."""
    data_dir = tmp_path / "data"
    assert _served_with(tmp_path, data_dir) == ["alembic"]  # the migrations ran
    assert _served_with(tmp_path, data_dir) == []
