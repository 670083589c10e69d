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
# Most tests wait on sockets, subprocesses and timers, not on the CPU. loadfile keeps a
# module's fixtures (a browser, a server process) on one worker. The Chromium table tests run
# apart, after the rest: overlapping them with the real-time audio tests (baresip, WebRTC)
# loaded both cores to 20-30 runnable processes and timers of both kinds ran late.
# With arguments (a file, -k, ...) one run takes them as given.
run_pytest() {
    set +e
    pytest "$@"
    local rc=$?
    set -e
    if [ "$rc" -eq 5 ]; then
        echo "pytest collected no tests: failing on purpose" >&2
        return 1
    fi
    return "$rc"
}
if [ "$#" -gt 0 ]; then
    run_pytest -n "${PYTEST_WORKERS:-4}" --dist loadfile "$@"
    exit $?
fi
rc=0
echo "-- everything but the browser table (${PYTEST_WORKERS:-4} workers)"
run_pytest -n "${PYTEST_WORKERS:-4}" --dist loadfile --ignore=tests/browser || rc=$?
echo "-- the browser table in Chromium (${BROWSER_WORKERS:-2} workers)"
run_pytest -n "${BROWSER_WORKERS:-2}" --dist loadfile tests/browser || rc=$?
exit "$rc"
