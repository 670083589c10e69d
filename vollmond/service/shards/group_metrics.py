"""`/metrics` of the worker processes of one machine, answered by whichever worker is asked
(docs/scaling.md, "Metrics").

The workers share one port (SO_REUSEPORT), so a scrape reaches any one of them; answering
for itself only, a worker would show Prometheus a different process at each scrape, and the
counters would jump between them. So the worker that is scraped asks every other worker for
its own figures on ``node.<worker>.metrics`` and answers with all of them, each sample
labelled with its ``worker``; ``vollmond_worker_scraped{worker}`` says which answered (0: it
did not answer within :data:`ASK_TIMEOUT_S`, its figures are missing from this scrape).

Why labels and not sums: a sum of gauges like the open sockets is one query away
(``sum without (worker)``), while a sum cannot be taken apart again; the process figures
(memory, CPU, open files) are per process by nature. Nodes over NATS are separate scrape
targets and answer for themselves (`vollmond.nodes`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Mapping

import structlog
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.metrics_core import GaugeMetricFamily, Metric
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.registry import Collector

from vollmond.service.shards.transport import Message, NoRespondersError, Served, Transport

log = structlog.get_logger(__name__)

#: How long the scraped worker waits for the others' figures.
ASK_TIMEOUT_S = 2.0
WORKER_LABEL = "worker"


def metrics_subject(node: str) -> str:
    return f"node.{node}.metrics"


class _Families(Collector):
    """Hands fixed metric families to a registry, for rendering them once."""

    def __init__(self, families: list[Metric]) -> None:
        self.families = families

    def collect(self) -> Iterator[Metric]:
        yield from self.families


def merge(texts: Mapping[str, str | None]) -> bytes:
    """One exposition of every worker's figures (`texts`: its exposition, None if it did not
    answer), each sample labelled with its worker, each family once."""
    families: dict[str, Metric] = {}
    scraped = GaugeMetricFamily(
        "vollmond_worker_scraped",
        "Whether the worker answered this scrape (its figures are below)",
        labels=[WORKER_LABEL],
    )
    for worker, text in texts.items():
        scraped.add_metric([worker], 0 if text is None else 1)
        for family in text_string_to_metric_families(text or ""):
            merged = families.get(family.name)
            if merged is None:
                merged = Metric(family.name, family.documentation, family.type, family.unit)
                families[family.name] = merged
            merged.samples.extend(
                sample._replace(labels={**sample.labels, WORKER_LABEL: worker})
                for sample in family.samples
            )
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Families([scraped, *families.values()]))
    return generate_latest(registry)


class GroupMetrics:
    """This worker's figures for the others, and all workers' for a scrape of this one."""

    def __init__(
        self,
        node: str,
        nodes: tuple[str, ...],
        transport: Transport,
        render: Callable[[], bytes],
    ) -> None:
        self.node = node
        self.nodes = nodes
        self.transport = transport
        self.render_here = render
        self.served = Served(transport, metrics_subject(node), self._on_request)

    async def start(self) -> None:
        await self.served.start()

    async def close(self) -> None:
        await self.served.close()

    def _on_request(self, message: Message) -> None:
        if message.reply is not None:
            self.transport.reply(message, self.render_here())

    async def render(self) -> bytes:
        """Every worker's figures, asked of the others at once."""
        others = [n for n in self.nodes if n != self.node]
        answers = await asyncio.gather(*(self._ask(n) for n in others))
        texts: dict[str, str | None] = {self.node: self.render_here().decode()}
        texts.update(zip(others, answers, strict=True))
        return merge({n: texts[n] for n in self.nodes})

    async def _ask(self, node: str) -> str | None:
        try:
            data = await self.transport.request(metrics_subject(node), b"", ASK_TIMEOUT_S)
        except (TimeoutError, NoRespondersError) as exc:
            log.warning("metrics_worker_silent", worker=node, error=type(exc).__name__)
            return None
        return data.decode()
