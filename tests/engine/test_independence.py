"""Each rule set imports only the engine core, the rule-set protocol and the shared kit from
the rest of the project, never another rule set: adding or changing one cannot break the
others. The kit itself imports only the core, so it stays rule-set independent."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parents[2] / "vollmond" / "engine"
SHARED = ("vollmond.engine.core", "vollmond.engine.ruleset", "vollmond.engine.kit")


def _foreign_imports(package: str, allowed: tuple[str, ...]) -> list[str]:
    foreign = []
    for path in sorted((ENGINE / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            for name in names:
                if name.startswith("vollmond") and not name.startswith(allowed):
                    foreign.append(f"{path.name}: {name}")
    return foreign


@pytest.mark.parametrize("package", ["standard", "classic", "mayor"])
def test_a_rule_set_imports_no_other_rule_set(package: str) -> None:
    assert _foreign_imports(package, (f"vollmond.engine.{package}", *SHARED)) == []
    assert len(list((ENGINE / package).rglob("*.py"))) > 20


def test_the_kit_imports_only_the_core() -> None:
    allowed = ("vollmond.engine.kit", "vollmond.engine.core")
    assert _foreign_imports("kit", allowed) == []
    assert len(list((ENGINE / "kit").rglob("*.py"))) >= 3
