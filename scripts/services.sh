#!/usr/bin/env bash
# Make sure the servers the tests use are up: NATS (127.0.0.1:4222, the transport between nodes)
# and PostgreSQL (127.0.0.1:5432, database `test`). On machines that run them already this only
# checks; elsewhere it starts Debian's nats-server and PostgreSQL cluster.
set -euo pipefail

nats_up() { (exec 3<>/dev/tcp/127.0.0.1/4222) 2>/dev/null; }
if ! nats_up; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    if [ ! -x /usr/sbin/nats-server ]; then
        $SUDO apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nats-server >/dev/null
    fi
    $SUDO start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- \
        -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log
    for _ in $(seq 1 30); do
        nats_up && break
        sleep 0.2
    done
    nats_up || { echo "services: NATS did not come up on 127.0.0.1:4222" >&2; exit 1; }
fi

if command -v pg_isready >/dev/null 2>&1 && pg_isready -q -h 127.0.0.1 -p 5432; then
    exit 0
fi
if [ -d /etc/postgresql ]; then
    version=$(ls /etc/postgresql | sort -V | tail -n 1)
    pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
else
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq postgresql >/dev/null
    version=$(ls /etc/postgresql | sort -V | tail -n 1)
    pg_ctlcluster --skip-systemctl-redirect "$version" main start
fi
for _ in $(seq 1 30); do
    pg_isready -q -h 127.0.0.1 -p 5432 && break
    sleep 1
done
pg_isready -h 127.0.0.1 -p 5432
# The tests expect trust auth for user postgres and a database `test`.
psql -h 127.0.0.1 -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname='test'" | grep -q 1 \
    || psql -h 127.0.0.1 -U postgres -c "CREATE DATABASE test"
