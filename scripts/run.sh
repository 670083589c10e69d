#!/usr/bin/env bash
# Set up a fresh Debian machine and run Vollmond.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
exec .venv/bin/vollmond simulate --world werwolf --players 12 --games 200 --seed 1 "$@"
