"""`vollmond serve --nats-url URL --node-id NAME --nodes A,B,...`: one node of several machines
that share the games over NATS (issue 15, docs/deployment.md).

Each node is one process: the whole web service with a `ShardedHub`, exactly as a worker of
`--workers N` (docs/scaling.md), with NATS in place of the supervisor's local bus. Ownership
is, for now, the same rendezvous hash over the fixed list of node names every node is given
(`--nodes`, the same list on every node): every node answers "who owns this game" alike
without asking anyone. A node that is down leaves its games stopped until it comes back, as a
dead worker does. With `--ownership leases` a game belongs instead to the node holding its lease
in the store (`service/shards/lease_ownership.py`): a node that dies stops renewing, and
another node takes its games over within about the lease's time-to-live (`--lease-ttl`) and
resumes them from their logs (docs/decisions.md, "Failover through the leases").

All nodes use one database (PostgreSQL: `DATABASE_URL`, the same schema) and the same keys in
their data directories (`secret.key` and the others: a session or a seat token made on one
node is read on another).
"""

from __future__ import annotations

from dataclasses import dataclass

import structlog

from vollmond.service.config import Settings
from vollmond.service.shards.lease_ownership import DEFAULT_LEASE_TTL_S, LeaseOwnership
from vollmond.service.shards.natsbus import NatsTransport
from vollmond.service.shards.ownership import Ownership
from vollmond.service.web.app import HubMaker, create_app
from vollmond.store.db import Sessions
from vollmond.store.leases import check_node_id
from vollmond.workers import WorkersError, hub_maker, serve_app, stop_this_process

DEFAULT_NAMESPACE = "vollmond"
NOT_IN_A_TOKEN = ".*>"  # NATS subject syntax
OWNERSHIPS = ("hash", "leases")


@dataclass(frozen=True, slots=True)
class NodeSpec:
    """Who this node is among which nodes, and where their NATS is."""

    node: str
    nodes: tuple[str, ...]
    nats_url: str
    namespace: str = DEFAULT_NAMESPACE
    ownership: str = "hash"
    lease_ttl_s: float = DEFAULT_LEASE_TTL_S

    @classmethod
    def parse(
        cls,
        node: str | None,
        nodes: str | None,
        nats_url: str,
        namespace: str,
        ownership: str = "hash",
        lease_ttl_s: float = DEFAULT_LEASE_TTL_S,
    ) -> NodeSpec:
        """From the command line's options; WorkersError with the reason if they do not fit."""
        if ownership not in OWNERSHIPS:
            raise WorkersError(f"--ownership is one of {', '.join(OWNERSHIPS)}")
        if not lease_ttl_s > 0:
            raise WorkersError("--lease-ttl is a positive number of seconds")
        if not node:
            raise WorkersError("--nats-url needs --node-id (this node's name)")
        names = tuple(n.strip() for n in (nodes or node).split(",") if n.strip())
        try:
            for name in (node, *names):
                check_node_id(name)
        except ValueError as exc:
            raise WorkersError(str(exc)) from exc
        if any(ch in name for name in names for ch in NOT_IN_A_TOKEN):
            raise WorkersError("a node id over NATS has no . * or > (it is a subject token)")
        if node not in names:
            raise WorkersError(f"--nodes must name this node ({node}) too")
        if len(set(names)) != len(names):
            raise WorkersError("--nodes names a node twice")
        if not namespace or any(ch in namespace for ch in NOT_IN_A_TOKEN + " "):
            raise WorkersError("--nats-namespace is one NATS subject token (no . * > or spaces)")
        return cls(node, names, nats_url, namespace, ownership, lease_ttl_s)


def node_hub_maker(spec: NodeSpec) -> HubMaker:
    """The node's hub on NATS; if the connection is lost for good, the node stops (crash-only:
    the service manager restarts it and its games resume from their logs)."""

    def leases(sessions: Sessions) -> Ownership:
        return LeaseOwnership(sessions, spec.node, ttl_s=spec.lease_ttl_s)

    return hub_maker(
        spec.node,
        spec.nodes,
        lambda: NatsTransport.connect(
            spec.nats_url, namespace=spec.namespace, name=spec.node, on_lost=stop_this_process
        ),
        leases if spec.ownership == "leases" else None,
    )


def serve_node(settings: Settings, spec: NodeSpec) -> None:
    """Run this node until it is stopped."""
    from vollmond.server import TELEPHONE  # noqa: PLC0415

    structlog.contextvars.bind_contextvars(node=spec.node)
    # The telephone too: a call stays on the node it reached; a game owned by another node is
    # followed through a mirror, and the call's voice relayed to its room there (voice/relay).
    app = create_app(settings, channels=TELEPHONE, make_hub=node_hub_maker(spec))
    serve_app(app, settings)
