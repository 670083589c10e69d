"""The mayor package imports only the engine core and the rule-set protocol from the rest of
the project, never another rule set: adding or changing one cannot break the other."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "vollmond" / "engine" / "mayor"
ALLOWED = ("vollmond.engine.mayor", "vollmond.engine.core", "vollmond.engine.ruleset")


def test_the_mayor_package_imports_no_other_rule_set() -> None:
    foreign = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            for name in names:
                if name.startswith("vollmond") and not name.startswith(ALLOWED):
                    foreign.append(f"{path.name}: {name}")
    assert foreign == []
    assert len(list(PACKAGE.rglob("*.py"))) > 20
