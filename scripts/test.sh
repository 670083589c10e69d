#!/usr/bin/env bash
# Set up everything the tests need, then run lint, types and the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/services.sh
export PATH="$PWD/.venv/bin:$PATH"

echo "== ruff"; ruff check .
echo "== ruff format"; ruff format --check .
echo "== mypy --strict"; mypy
echo "== pytest"
# Most tests wait on sockets, subprocesses and timers, not on the CPU: four workers keep both
# cores busy. loadfile keeps a module's fixtures (a browser, a server process) on one worker.
set +e
pytest -n "${PYTEST_WORKERS:-4}" --dist loadfile "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
    echo "pytest collected no tests: failing on purpose" >&2
    exit 1
fi
exit "$rc"
