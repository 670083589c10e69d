"""Sum the per-test CPU lines that tests/conftest.py writes (VOLLMOND_CPU_REPORT=<dir>).

    VOLLMOND_CPU_REPORT=/tmp/cpu ./scripts/test.sh && python scripts/cpu_report.py /tmp/cpu

Prints the suite's total CPU and wall seconds and the files that cost the most CPU: on two
cores the suite cannot take less than half its CPU seconds, whatever the number of workers.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path


def main(folder: Path, top: int = 40) -> None:
    per_file: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
    for path in folder.glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            totals = per_file[row["test"].split("::", 1)[0]]
            totals[0] += row["cpu"] + row["children"]
            totals[1] += row["cpu"]
            totals[2] += row["wall"]
            totals[3] += 1
    cpu = sum(t[0] for t in per_file.values())
    wall = sum(t[2] for t in per_file.values())
    print(f"{len(per_file)} files: {cpu:.0f} CPU s ({cpu / 2:.0f} s on two cores)", end="")
    print(f", {wall:.0f} s of tests one after another")
    print(f"{'CPU s':>7} {'own':>7} {'wall s':>7} {'tests':>5}  file")
    ranked = sorted(per_file.items(), key=lambda kv: -kv[1][0])
    for name, (total, own, wall_s, count) in ranked[:top]:
        print(f"{total:7.1f} {own:7.1f} {wall_s:7.1f} {int(count):5d}  {name}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 40)
