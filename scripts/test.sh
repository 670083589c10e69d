#!/usr/bin/env bash
# Set up everything the tests need, then run lint, types and the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/services.sh
setup_s=$SECONDS  # the suite's own time is measured from here (the 10-minute budget)
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
# but the Chromium table tests on eight workers, then those on three (each Chromium page is heavy;
# the headless shell less so than the full browser). Not the whole rest beside Chromium: on two
# cores that loaded the machine to 25 runnable processes, every short service test took ten
# times as long and timers ran late (measured: 14 min side by side); only the telephone's
# real-audio tests, which mostly wait, run beside the Chromium table (AUDIO below). loadfile
# keeps a module's fixtures (a browser, a server process) on one worker. All runs always run;
# the suite fails if any fails. With arguments (a file, -k, ...) one run takes them as given.
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
# Eight, not six: the first run is as much waiting as CPU (on a slower 2-core machine, session
# 14: 1,511 s of tests, 416 CPU s, 153 % of the cores busy with six workers); with eight it took
# 296 s instead of 362 s in the same script, with no failure. Four Chromium workers were tried
# in the same run and are too many: the browser table took longer (291 s against 247 s), a day
# timer ran out under a test and four real-audio tests beside it missed their levels.
core=${PYTEST_WORKERS:-8}
chromium=${BROWSER_WORKERS:-3}
beside=${BESIDE_WORKERS:-5}
# The telephone's real-audio tests (tests/phone/e2e) run beside the Chromium table, not in the
# first run: they are a quarter of the first run's test time but a sixth of its CPU (baresip
# callers talking through whole nights: 822 s of test time, 58 CPU s, under the whole suite),
# and the Chromium table leaves more than half of the two cores idle (160 CPU s in 3:13). Their
# time hardly shrinks on a quiet machine (it is the prompts' and the nights' length: 725-780 s
# of worker time at load 7-45), so they get workers of their own to end about when the
# Chromium table does; the first run is shorter by their time divided by its workers. Five,
# not four, since session 18: with four they had grown to end 50 s after the Chromium table
# (235 s against 184 s; with five 204 s against 192 s, the whole suite 453 s -> 420 s).
# BESIDE_WORKERS=0 runs them in the first run again (as before), to compare or should they
# turn out to suffer beside Chromium.
AUDIO=tests/phone/e2e
# Each run has a temporary directory of its own: pytest keeps only the newest three of its
# default ones and deletes older ones, also those of a run still going.
tmp=$(mktemp -d -t vollmond-tests.XXXXXX)
export VOLLMOND_PROMPT_CACHE="$tmp/prompts"  # one for all runs (tests/prompt_cache.py)
rc=0
# mypy (half a minute of one core from a cold cache) checks beside the first run's start; its
# verdict counts as much as the tests'.
mypy > "$tmp/mypy.log" 2>&1 &
mypy_pid=$!
# The telephone's fixed prompts, rendered once into the run's cache before the workers start
# (tests/prompt_cache.py): the first run's services would otherwise render them several times
# over at once.
python -m tests.prompt_cache
not_audio=(--ignore="$AUDIO")
[ "$beside" -gt 0 ] || not_audio=()
echo "-- everything but the browser table${not_audio:+ and $AUDIO}, on $core workers"
run_pytest -n "$core" --dist loadfile --no-loadscope-reorder --durations=25 --ignore=tests/browser "${not_audio[@]}" --basetemp="$tmp/core" || rc=$?
echo "-- the first run ended $((SECONDS - setup_s)) s into the suite"
audio_pid=""
if [ "$beside" -gt 0 ]; then
    echo "-- the browser table in Chromium on $chromium workers; $AUDIO beside it on $beside (its output follows)"
    run_pytest -n "$beside" --dist loadfile --no-loadscope-reorder --durations=15 "$AUDIO" --basetemp="$tmp/audio" > "$tmp/audio.log" 2>&1 &
    audio_pid=$!
else
    echo "-- the browser table in Chromium, on $chromium workers"
fi
run_pytest -n "$chromium" --dist loadfile --no-loadscope-reorder --durations=15 tests/browser --basetemp="$tmp/browser" || rc=$?
if [ -n "$audio_pid" ]; then
    audio_rc=0
    wait "$audio_pid" || audio_rc=$?
    echo "-- $AUDIO (run beside the browser table)"
    cat "$tmp/audio.log"
    [ "$audio_rc" -eq 0 ] || rc=$audio_rc
fi
echo "== mypy --strict (run beside the tests)"
mypy_rc=0
wait "$mypy_pid" || mypy_rc=$?
cat "$tmp/mypy.log"
[ "$mypy_rc" -eq 0 ] || rc=$mypy_rc
echo "== the suite took $((SECONDS - setup_s)) s after $setup_s s of setup (exit $rc)"
[ "$rc" -ne 0 ] || rm -rf "$tmp"  # kept after a failure: the servers' logs are in it
exit "$rc"
