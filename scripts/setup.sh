#!/usr/bin/env bash
# Prepare a fresh Debian machine: system packages, a virtualenv, the project and its dev tools.
# Idempotent: a second run only checks. Used by run.sh and test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

# espeak-ng: German prompts; sox: audio checks; sip-tester (sipp), baresip: real SIP peers in
# the tests; chromium-headless-shell (and chromium, for its notifications): the real browser for
# the browser tests; postgresql-client: psql checks;
# kamailio: the SIP proxy in front of several nodes (deploy/kamailio, tests/deploy); nats-server:
# the messaging between nodes (vollmond/service/shards/natsbus.py, started by services.sh).
APT_PACKAGES=(python3-venv python3-dev espeak-ng sox sip-tester baresip chromium chromium-headless-shell fonts-dejavu-core
    kamailio nats-server)
missing=()
for p in "${APT_PACKAGES[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
    echo "setup: installing Debian packages: ${missing[*]}"
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null
    # Debian starts its own kamailio.service (example config, port 5060 on every address), which
    # would take the SIP port of `vollmond serve`. Ours runs from deploy/ (a unit of its own).
    if [[ " ${missing[*]} " == *" kamailio "* ]] && command -v systemctl >/dev/null \
        && [ -d /run/systemd/system ]; then
        $SUDO systemctl disable --now kamailio.service >/dev/null 2>&1 || true
    fi
fi

PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
fi
stamp=.venv/.installed-$(sha1sum pyproject.toml | cut -c1-12)
if [ ! -f "$stamp" ]; then
    .venv/bin/python -m pip install -q --upgrade pip
    .venv/bin/python -m pip install -q -e '.[dev]'
    rm -f .venv/.installed-*
    touch "$stamp"
fi
