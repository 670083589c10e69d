"""The telephone's voice relay in a node's `/metrics` (issue 15: operators see what crosses
nodes): the lines relayed and hosted now, and the relayed calls' gaps, late and dropped mix
frames as counters, read from the hub's node figures at scrape time."""

from __future__ import annotations

from vollmond.service.metrics import Metrics
from vollmond.service.shards.stats import NodeStats
from vollmond.voice.relay import RelayStats

from .test_node_console import sample


def test_a_node_with_a_telephone_shows_its_relayed_and_hosted_lines() -> None:
    relay = RelayStats(
        relayed_lines=3,
        hosted_lines=5,
        underruns=7,
        late=2,
        dropped=1,
        bad_messages=0,
        delay_frames=3,
    )
    stats = NodeStats("b", "leases", 2, 1, relay=relay)
    metrics = Metrics()
    metrics.watch_node(lambda: stats)
    text = metrics.render().decode()
    assert sample(text, "vollmond_voice_relayed_lines") == 3
    assert sample(text, "vollmond_voice_hosted_lines") == 5
    assert sample(text, "vollmond_voice_relay_delay_frames") == 3
    assert sample(text, "vollmond_voice_relay_underruns_total") == 7
    assert sample(text, "vollmond_voice_relay_late_total") == 2
    assert sample(text, "vollmond_voice_relay_dropped_total") == 1
    assert sample(text, "vollmond_voice_relay_bad_messages_total") == 0


def test_a_node_without_a_telephone_shows_no_relay() -> None:
    metrics = Metrics()
    metrics.watch_node(lambda: NodeStats("a", "hash", 0, 0))
    text = metrics.render().decode()
    assert sample(text, "vollmond_games_owned") == 0
    assert "vollmond_voice_relayed_lines" not in text
