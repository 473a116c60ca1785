"""The switch-side congestion counter (p4src congestion.p4 ``congestion_events``) in P4Info and metrics."""
from __future__ import annotations

from prometheus_client import CollectorRegistry, generate_latest

from controller.mapping import P4Names
from controller.metrics import FabricCollector, MetricsSnapshot
from controller.telemetry import C_CONGESTION_EVENTS, CONGESTION_EVENTS, SwitchCounters
from mrc_fabric.targets import load_pipeline


def test_program_declares_the_counter_with_one_entry_per_event():
    names = P4Names(load_pipeline("softswitch").p4info)
    found = names.counters_named(C_CONGESTION_EVENTS)
    assert len(found) == 1, "congestion_events must be one top-level counter"
    assert found[0].size == len(CONGESTION_EVENTS) == 3


def test_metrics_export_congestion_events():
    c = SwitchCounters(congestion={"trimmed": 7, "ecn_marked": 40, "early_drop": 0})
    reg = CollectorRegistry(auto_describe=False)
    reg.register(FabricCollector(lambda: MetricsSnapshot(counters={"p1l1": c})))
    text = generate_latest(reg).decode()
    assert 'mrc_congestion_events_total{event="trimmed",switch="p1l1"} 7.0' in text
    assert 'mrc_congestion_events_total{event="ecn_marked",switch="p1l1"} 40.0' in text
    assert 'mrc_congestion_events_total{event="early_drop",switch="p1l1"} 0.0' in text
