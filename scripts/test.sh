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
# Most tests wait on sockets, subprocesses and timers, not on the CPU (the whole suite needs
# about a third of two cores' time), so they run in parallel: the Chromium table tests on
# their own workers (each Chromium is heavy; more than two at once loaded both cores to 20-30
# runnable processes and timers ran late) and, beside them, everything else on more workers.
# loadfile keeps a module's fixtures (a browser, a server process) on one worker. The two runs
# print with a prefix; the suite fails if either fails.
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
core=${PYTEST_WORKERS:-6}
chromium=${BROWSER_WORKERS:-2}
echo "-- everything but the browser table on $core workers; beside it, the browser table in Chromium on $chromium"
# Each run has a temporary directory of its own: pytest keeps only the newest three of its
# default ones and deletes older ones, also those of a run still going.
tmp=$(mktemp -d -t vollmond-tests.XXXXXX)
( run_pytest -n "$core" --dist loadfile --durations=25 --ignore=tests/browser --basetemp="$tmp/core" 2>&1 |
    sed -u 's/^/[core] /' ) &
core_pid=$!
( run_pytest -n "$chromium" --dist loadfile --durations=15 tests/browser --basetemp="$tmp/browser" 2>&1 |
    sed -u 's/^/[browser] /' ) &
browser_pid=$!
rc=0
wait "$core_pid" || rc=$?
wait "$browser_pid" || rc=$?
[ "$rc" -ne 0 ] || rm -rf "$tmp"  # kept after a failure: the servers' logs are in it
exit "$rc"
