#!/usr/bin/env bash
# Try several Vollmond nodes behind Kamailio on one machine (docs/deployment.md, "Trying it").
#
#   deploy/local-cluster.sh            # 3 nodes, PostgreSQL, Kamailio on 127.0.0.2:5060
#   NODES=2 DB=sqlite deploy/local-cluster.sh
#
# Starts NATS and PostgreSQL if they are not running, then N `vollmond serve` processes and
# Kamailio in front of their SIP ports; Ctrl-C stops what this script started (NATS and
# PostgreSQL only if it started them). Call sip:1234@127.0.0.2:5060 with any softphone; each
# node's browser client is on http://127.0.0.1:8080, :8081, ...
#
# TODAY THE NODES ARE INDEPENDENT: each has its own database (a schema of its own in
# PostgreSQL, or its own SQLite file), its own games and its own players; Kamailio spreads new
# calls over them and takes a dead node out. These nodes have telephones, which nodes sharing
# games over NATS (`vollmond serve --nats-url`, one schema, no telephone yet) do not; see
# docs/deployment.md.
set -euo pipefail
cd "$(dirname "$0")/.."

NODES=${NODES:-3}
DB=${DB:-postgresql}                                     # postgresql or sqlite
PG_URL=${PG_URL:-postgresql://postgres@127.0.0.1:5432/vollmond}
SCHEMA_PREFIX=${SCHEMA_PREFIX:-vollmond_node_}
EDGE_ADDR=${EDGE_ADDR:-127.0.0.2}                        # Kamailio's address (callers dial it)
SIP_PORT=${SIP_PORT:-5060}                               # Kamailio's; node i gets SIP_PORT+i
HTTP_PORT=${HTTP_PORT:-8080}                             # node i gets HTTP_PORT+i-1
NATS_PORT=${NATS_PORT:-4222}
STATE=${STATE:-data/cluster}
VOLLMOND=${VOLLMOND:-.venv/bin/vollmond}

for program in kamailio "$VOLLMOND"; do
    command -v "$program" >/dev/null || { echo "missing $program: run ./scripts/setup.sh" >&2; exit 1; }
done
mkdir -p -m 0700 "$STATE"
started=()   # PIDs this script started, stopped in reverse order at exit

stop_all() {
    trap - EXIT INT TERM
    for ((i = ${#started[@]} - 1; i >= 0; i--)); do
        kill "${started[i]}" 2>/dev/null || true
    done
    wait 2>/dev/null || true
    if [ -n "${pg_started:-}" ]; then
        pg_ctlcluster --skip-systemctl-redirect "$pg_started" main stop || true
    fi
    echo "local-cluster: stopped"
}
trap stop_all EXIT
trap 'stop_all; exit 130' INT TERM

port_open() {  # host port
    (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null
}

wait_for() {  # what command...
    local what=$1; shift
    for _ in $(seq 1 150); do
        if "$@"; then return 0; fi
        sleep 0.2
    done
    echo "local-cluster: $what did not come up" >&2
    exit 1
}

# -- NATS (for nodes started with --nats-url; this script's nodes do not use it) -------------
if port_open 127.0.0.1 "$NATS_PORT"; then
    echo "local-cluster: NATS already runs on 127.0.0.1:$NATS_PORT"
elif command -v nats-server >/dev/null; then
    nats-server -a 127.0.0.1 -p "$NATS_PORT" >"$STATE/nats.log" 2>&1 &
    started+=($!)
    wait_for NATS port_open 127.0.0.1 "$NATS_PORT"
    echo "local-cluster: NATS started on 127.0.0.1:$NATS_PORT"
else
    echo "local-cluster: no nats-server (apt-get install nats-server); going on without it"
fi

# -- PostgreSQL: one database, a schema per node ---------------------------------------------
if [ "$DB" = postgresql ]; then
    pg_host=$(sed -E 's#^[a-z+]+://([^@/]*@)?([^:/]+).*#\2#' <<<"$PG_URL")
    pg_port=$(sed -nE 's#^[a-z+]+://([^@/]*@)?[^:/]+:([0-9]+).*#\2#p' <<<"$PG_URL")
    pg_port=${pg_port:-5432}
    if ! port_open "$pg_host" "$pg_port"; then
        version=$(ls /etc/postgresql | sort -n | tail -1)
        pg_ctlcluster --skip-systemctl-redirect "$version" main start
        pg_started=$version
        wait_for PostgreSQL port_open "$pg_host" "$pg_port"
    fi
    database=${PG_URL##*/}
    admin=${PG_URL%/*}/postgres
    if ! psql -qAt "$admin" -c "SELECT 1 FROM pg_database WHERE datname = '$database'" | grep -q 1; then
        psql -q "$admin" -c "CREATE DATABASE \"$database\""
    fi
fi

# -- the nodes ---------------------------------------------------------------------------------
dispatcher="$STATE/dispatcher.list"
: >"$dispatcher"
for i in $(seq 1 "$NODES"); do
    home="$STATE/node-$i"
    mkdir -p -m 0700 "$home"
    printf '[sip]\ntrusted_proxies = ["%s"]\n' "$EDGE_ADDR" >"$home/vollmond.toml"
    env=(VOLLMOND_HOST=127.0.0.1)
    if [ "$DB" = postgresql ]; then
        schema="$SCHEMA_PREFIX$i"
        psql -q "$PG_URL" -c "CREATE SCHEMA IF NOT EXISTS \"$schema\""
        env+=(DATABASE_URL="$PG_URL" VOLLMOND_DATABASE_SCHEMA="$schema")
    else
        env+=(DATABASE_URL=)
    fi
    # One process a node: a node's workers would answer SIP on SIP_PORT + i, + i + 1, ...
    env "${env[@]}" "$VOLLMOND" serve --port $((HTTP_PORT + i - 1)) --sip-port $((SIP_PORT + i)) \
        --workers 1 --data-dir "$home/data" --config "$home/vollmond.toml" >"$home/serve.log" 2>&1 &
    started+=($!)
    echo "1 sip:127.0.0.1:$((SIP_PORT + i))" >>"$dispatcher"
done
for i in $(seq 1 "$NODES"); do
    wait_for "node $i" curl -fs -o /dev/null "http://127.0.0.1:$((HTTP_PORT + i - 1))/healthz"
    echo "local-cluster: node $i  http://127.0.0.1:$((HTTP_PORT + i - 1))  sip 127.0.0.1:$((SIP_PORT + i))"
done

# -- Kamailio in front -------------------------------------------------------------------------
kam="$STATE/kamailio"
mkdir -p "$kam"
kamailio -DD -E -m 64 -M 8 -f deploy/kamailio/kamailio.cfg -Y "$(realpath "$kam")" \
    -A "LISTEN=udp:$EDGE_ADDR:$SIP_PORT" \
    -A "DISPATCHER_LIST=\"$(realpath "$dispatcher")\"" \
    -A "CTL_SOCKET=\"unix:$(realpath "$kam")/kamailio.ctl\"" >"$kam/kamailio.log" 2>&1 &
started+=($!)
wait_for Kamailio test -S "$kam/kamailio.ctl"
echo "local-cluster: Kamailio on $EDGE_ADDR:$SIP_PORT — call sip:1234@$EDGE_ADDR:$SIP_PORT"
echo "local-cluster: nodes as Kamailio sees them: kamcmd -s unix:$(realpath "$kam")/kamailio.ctl dispatcher.list"
echo "local-cluster: logs in $STATE; Ctrl-C stops everything this script started"
wait -n "${started[@]}" || true
echo "local-cluster: a process ended; stopping the rest" >&2
