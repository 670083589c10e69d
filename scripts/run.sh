#!/usr/bin/env bash
# Set up a fresh Debian machine and run Vollmond: web + WebSocket on :8080, telephone (SIP/UDP)
# on :5060, SQLite under ./data/. Options pass through (e.g. --port 8000 --sip-port 5070);
# DATABASE_URL=postgresql://... selects PostgreSQL; VOLLMOND_HOST=0.0.0.0 listens publicly.
# One process by default; --workers N shares the games over N processes (one per core is the
# aim, but the conference rooms are still per process: docs/scaling.md "What is not sharded yet").
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
exec .venv/bin/vollmond serve "$@"
