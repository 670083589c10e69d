#!/usr/bin/env bash
# Set up a fresh Debian machine and run Vollmond: web + WebSocket on :8080, telephone (SIP/UDP)
# on :5060, SQLite under ./data/. Options pass through (e.g. --port 8000 --sip-port 5070);
# DATABASE_URL=postgresql://... selects PostgreSQL; VOLLMOND_HOST=0.0.0.0 listens publicly.
# One worker process per core by default, sharing the games and conference rooms (SIP on
# :5060, :5061, ...: docs/scaling.md); --workers 1 runs everything in one process.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
exec .venv/bin/vollmond serve "$@"
