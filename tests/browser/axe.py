"""axe-core in the page (vendored from the npm registry: tests/browser/vendor/axe.min.js,
`npm pack axe-core`, MPL-2.0; test-only, never served). Injected through the DevTools
protocol, so the page's CSP (no inline scripts) stays as it is."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import Page

AXE = (Path(__file__).parent / "vendor" / "axe.min.js").read_text()
SERIOUS = ("serious", "critical")
RUN = """async () => {
  const result = await axe.run(document, {
    runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] },
  });
  return result.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map((n) => ({ target: n.target.join(" "), summary: n.failureSummary })),
  }));
}"""


def serious_violations(page: Page) -> list[dict[str, Any]]:
    """The serious and critical axe violations of the page as it is now."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(AXE + "\n;true")
    found: list[dict[str, Any]] = page.evaluate(RUN)
    return [v for v in found if v["impact"] in SERIOUS]


def describe(violations: list[dict[str, Any]]) -> str:
    lines = []
    for v in violations:
        lines.append(f"{v['id']} ({v['impact']}): {v['help']}")
        lines += [f"    {n['target']}: {n['summary'][:160]}" for n in v["nodes"][:5]]
    return "\n".join(lines)
