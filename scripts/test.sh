#!/usr/bin/env bash
# Set up everything the tests need, then run lint, types and the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/services.sh
export PATH="$PWD/.venv/bin:$PATH"
# Bytecode caches: a sandbox that sets PYTHONDONTWRITEBYTECODE=1 makes every worker and every
# service process it starts compile the package and pytest rewrite every test module again
# (16 s of CPU per worker to collect; 6 s with the caches).
unset PYTHONDONTWRITEBYTECODE

echo "== ruff"; ruff check .
echo "== ruff format"; ruff format --check .
if [ "$#" -gt 0 ]; then
    echo "== mypy --strict"; mypy
fi
echo "== pytest"
# Most tests wait on sockets, subprocesses and timers, so they run in parallel: first everything
# but the Chromium table tests on six workers, then those on three (each Chromium page is heavy;
# the headless shell less so than the full browser). One after the other, not side by side: on two cores, Chromium beside the rest loaded
# the machine to 25 runnable processes, every short service test took ten times as long and
# timers ran late (measured: 14 min side by side). loadfile keeps a module's fixtures (a
# browser, a server process) on one worker. Both runs always run; the suite fails if either
# fails. With arguments (a file, -k, ...) one run takes them as given.
# --no-loadscope-reorder: pytest-xdist would otherwise hand out the files with the most tests
# first, whatever the collection order, so the long files of one or two tests (a whole game by
# phone, the failover) started last and one worker ran them alone at the end; with it, the
# order tests/conftest.py gives (HEAVY_FILES, longest first) is the order handed out.
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
    run_pytest -n "${PYTEST_WORKERS:-4}" --dist loadfile --no-loadscope-reorder "$@"
    exit $?
fi
core=${PYTEST_WORKERS:-6}
chromium=${BROWSER_WORKERS:-3}
# Each run has a temporary directory of its own: pytest keeps only the newest three of its
# default ones and deletes older ones, also those of a run still going.
tmp=$(mktemp -d -t vollmond-tests.XXXXXX)
export VOLLMOND_PROMPT_CACHE="$tmp/prompts"  # one for both runs (tests/prompt_cache.py)
rc=0
# mypy (half a minute of one core from a cold cache) checks beside the first run's start; its
# verdict counts as much as the tests'.
mypy > "$tmp/mypy.log" 2>&1 &
mypy_pid=$!
echo "-- everything but the browser table, on $core workers"
run_pytest -n "$core" --dist loadfile --no-loadscope-reorder --durations=25 --ignore=tests/browser --basetemp="$tmp/core" || rc=$?
echo "-- the browser table in Chromium, on $chromium workers"
run_pytest -n "$chromium" --dist loadfile --no-loadscope-reorder --durations=15 tests/browser --basetemp="$tmp/browser" || rc=$?
echo "== mypy --strict (run beside the tests)"
mypy_rc=0
wait "$mypy_pid" || mypy_rc=$?
cat "$tmp/mypy.log"
[ "$mypy_rc" -eq 0 ] || rc=$mypy_rc
[ "$rc" -ne 0 ] || rm -rf "$tmp"  # kept after a failure: the servers' logs are in it
exit "$rc"
