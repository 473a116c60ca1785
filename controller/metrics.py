"""Prometheus export of the controller's view: switch state, port and drop counters, queues, links.

A custom collector turns a ``MetricsSnapshot`` (taken at scrape time) into metric families, on a
private registry served by prometheus-client's HTTP server (``--metrics-port``).
"""
from __future__ import annotations

import errno
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from .telemetry import Postcard, SwitchCounters

LINK_STATES = ("up", "half", "dead", "miswired")
# where a switch lost frames outside its P4 pipeline (``Controller.outside_drops``; the label values of
# ``mrc_outside_drop_packets_total``): its ports' sockets in the kernel before the pipeline saw them,
# its traffic manager's full queues after the pipeline admitted them, frames its receive rings cut
# short, frames its ports could not send (link down, transmit ring full)
# (the value: how ``mrc-controller status`` names each in its drops table)
OUTSIDE_DROP_KINDS = {"kernel_rx": "kernel receive", "queue_tail": "traffic-manager tail",
                      "rx_error": "receive ring error", "tx": "transmit"}


@dataclass
class SwitchInfo:
    """Control-plane state of one switch for export."""

    connected: bool = False
    # connected and its latest counter read succeeded: the switch's counter series are current
    # (``mrc_switch_up``; a switch not up exports none)
    up: bool = False
    primary: bool = False
    converged: bool = False
    # the last converge attempt was refused by the switch (a write, the pipeline) or the plan's mapping
    # failed; retried with a backoff up to Options.refusal_backoff_max_s (``mrc_switch_refused``)
    refused: bool = False
    # converge attempts that failed to reach the switch: not connected, no arbitration answer, no answer
    # to an RPC, election id taken (``mrc_switch_connect_failures_total``)
    connect_failures: int = 0
    # converge attempts the switch answered and refused (its pipeline, a write) or the plan's mapping
    # failed (``mrc_switch_refusals_total``); until 2026-12-07 counted in connect_failures
    refusals: int = 0
    # counter reads ABORTED because another controller pushed a pipeline during them: transient, the next
    # read retries (``mrc_switch_counter_reads_interrupted_total``)
    counter_reads_interrupted: int = 0
    reconcile_runs: int = 0
    entities_written: int = 0
    pipeline_pushes: int = 0
    desired_entities: int = 0


@dataclass
class MetricsSnapshot:
    """Everything exported by one scrape."""

    switches: dict[str, SwitchInfo] = field(default_factory=dict)
    counters: dict[str, SwitchCounters] = field(default_factory=dict)
    postcards_total: dict[str, int] = field(default_factory=dict)  # exported series: switches that are up
    postcards: list[Postcard] = field(default_factory=list)  # the recent ones received, of any switch
    links: dict[tuple[str, str], str] = field(default_factory=dict)  # (a, b) -> state
    wiring_problems: dict[str, int] = field(default_factory=dict)  # miswired/dead/unexpected -> count
    # switch -> {OUTSIDE_DROP_KINDS member: packets}; empty where no one counts them (a bare controller,
    # a target without port statistics: bmv2), never a 0 nobody measured
    outside_drops: dict[str, dict[str, int]] = field(default_factory=dict)


class FabricCollector:
    """prometheus-client collector over a snapshot function."""

    def __init__(self, snapshot: Callable[[], MetricsSnapshot]) -> None:
        self.snapshot = snapshot

    def describe(self) -> list[Metric]:
        return []  # families are dynamic; skip the describe-time collect

    def collect(self) -> Iterator[Metric]:
        snap = self.snapshot()
        sw = ["switch"]
        fams = {
            "conn": GaugeMetricFamily("mrc_switch_connected", "P4Runtime stream to the switch is up", labels=sw),
            "up": GaugeMetricFamily("mrc_switch_up", "the switch is connected and its latest counter read "
                                    "succeeded (0: its counter series are not exported)", labels=sw),
            "primary": GaugeMetricFamily("mrc_switch_primary", "this controller is the switch's primary", labels=sw),
            "conv": GaugeMetricFamily("mrc_switch_converged", "the switch holds the desired entities", labels=sw),
            "refused": GaugeMetricFamily("mrc_switch_refused", "the switch refused the last converge attempt (a write, "
                                         "the pipeline, the mapping; retried with a growing backoff)", labels=sw),
            "desired": GaugeMetricFamily("mrc_switch_desired_entities", "entities the plan puts on the switch",
                                         labels=sw),
            "fail": CounterMetricFamily("mrc_switch_connect_failures", "converge attempts that did not reach the "
                                        "switch (not connected, no answer, election id taken)", labels=sw),
            "refusals": CounterMetricFamily("mrc_switch_refusals", "converge attempts the switch answered and "
                                            "refused (the pipeline, a write) or the plan's mapping failed", labels=sw),
            "reads_int": CounterMetricFamily("mrc_switch_counter_reads_interrupted", "counter reads cut short "
                                             "by another controller's pipeline push (the next read retries)",
                                             labels=sw),
            "runs": CounterMetricFamily("mrc_reconcile_runs", "reconcile passes", labels=sw),
            "writes": CounterMetricFamily("mrc_reconcile_written_entities", "entities written by reconcile",
                                          labels=sw),
            "push": CounterMetricFamily("mrc_pipeline_pushes", "forwarding pipelines pushed", labels=sw),
        }
        for name, info in sorted(snap.switches.items()):
            fams["conn"].add_metric([name], int(info.connected))
            fams["up"].add_metric([name], int(info.up))
            fams["primary"].add_metric([name], int(info.primary))
            fams["conv"].add_metric([name], int(info.converged))
            fams["refused"].add_metric([name], int(info.refused))
            fams["desired"].add_metric([name], info.desired_entities)
            fams["fail"].add_metric([name], info.connect_failures)
            fams["refusals"].add_metric([name], info.refusals)
            fams["reads_int"].add_metric([name], info.counter_reads_interrupted)
            fams["runs"].add_metric([name], info.reconcile_runs)
            fams["writes"].add_metric([name], info.entities_written)
            fams["push"].add_metric([name], info.pipeline_pushes)
        yield from fams.values()

        sp = ["switch", "port"]
        rxp = CounterMetricFamily("mrc_port_rx_packets", "packets received on a switch port", labels=sp)
        rxb = CounterMetricFamily("mrc_port_rx_bytes", "bytes received on a switch port", labels=sp)
        txp = CounterMetricFamily("mrc_port_tx_packets", "packets sent on a switch port", labels=sp)
        txb = CounterMetricFamily("mrc_port_tx_bytes", "bytes sent on a switch port", labels=sp)
        dp = CounterMetricFamily("mrc_drop_packets", "packets dropped by the program, by reason",
                                 labels=["switch", "reason"])
        db = CounterMetricFamily("mrc_drop_bytes", "bytes dropped by the program, by reason",
                                 labels=["switch", "reason"])
        tp = CounterMetricFamily("mrc_table_hit_packets", "packets that hit a table entry (direct counters)",
                                 labels=["switch", "table"])
        ce = CounterMetricFamily("mrc_congestion_events", "packets trimmed, CE-marked or dropped early by the program",
                                 labels=["switch", "event"])
        qd = GaugeMetricFamily("mrc_queue_depth_packets", "the program's data-queue depth estimate per port (egress_qdepth: last dequeue depth, adjusted by ingress)",
                               labels=sp)
        for name, c in sorted(snap.counters.items()):
            for port, (p, b) in sorted(c.port_rx.items()):
                rxp.add_metric([name, str(port)], p)
                rxb.add_metric([name, str(port)], b)
            for port, (p, b) in sorted(c.port_tx.items()):
                txp.add_metric([name, str(port)], p)
                txb.add_metric([name, str(port)], b)
            for reason, (p, b) in sorted(c.drops.items()):
                dp.add_metric([name, reason], p)
                db.add_metric([name, reason], b)
            for table, (p, _) in sorted(c.tables.items()):
                tp.add_metric([name, table], p)
            for port, depth in sorted(c.qdepth.items()):
                qd.add_metric([name, str(port)], depth)
            for event, n in sorted(c.congestion.items()):
                ce.add_metric([name, event], n)
        yield from (rxp, rxb, txp, txb, dp, db, tp, qd, ce)
        od = CounterMetricFamily("mrc_outside_drop_packets", "frames a switch lost outside its P4 pipeline, by where "
                                 "(kernel_rx: its sockets' receive drops; queue_tail: its traffic manager's full "
                                 "queues; rx_error: cut short by its receive rings; tx: its ports could not send)",
                                 labels=["switch", "where"])
        for name, kinds in sorted(snap.outside_drops.items()):
            for kind, n in sorted(kinds.items()):
                od.add_metric([name, kind], n)
        yield od

        pc = CounterMetricFamily("mrc_postcards", "telemetry postcards received", labels=sw)
        for name, n in sorted(snap.postcards_total.items()):
            pc.add_metric([name], n)
        yield pc
        # the latest postcard's gauges of the switches whose postcard count is exported: not those of a
        # switch that is not up (Controller.metrics_snapshot), whose last values would pass for current
        last: dict[str, Postcard] = {p.switch: p for p in snap.postcards if p.switch in snap.postcards_total}
        lat = GaugeMetricFamily("mrc_postcard_hop_latency_us", "hop latency of the latest postcard", labels=sw)
        pq = GaugeMetricFamily("mrc_postcard_queue_depth", "queue depth of the latest postcard", labels=sw)
        for name, p in sorted(last.items()):
            lat.add_metric([name], p.hop.hop_latency_us)
            pq.add_metric([name], p.hop.queue_depth)
        yield from (lat, pq)

        lu = GaugeMetricFamily("mrc_link_up", "fabric link liveness from the wiring check (1 = both ways)",
                               labels=["a", "b"])
        ls = GaugeMetricFamily("mrc_link_state", "fabric link state from the wiring check",
                               labels=["a", "b", "state"])
        for (a, b), st in sorted(snap.links.items()):
            lu.add_metric([a, b], int(st == "up"))
            for s in LINK_STATES:
                ls.add_metric([a, b, s], int(st == s))
        wp = GaugeMetricFamily("mrc_wiring_problems", "problems found by the last wiring check", labels=["kind"])
        for kind, n in sorted(snap.wiring_problems.items()):
            wp.add_metric([kind], n)
        yield from (lu, ls, wp)


class MetricsError(RuntimeError):
    """The metrics endpoint could not be opened (the message says which address and why)."""


def serve(snapshot: Callable[[], MetricsSnapshot], port: int, addr: str = "127.0.0.1"):
    """Serve the metrics on ``addr:port``; returns (registry, server or None, thread or None)."""
    reg = CollectorRegistry(auto_describe=False)
    reg.register(FabricCollector(snapshot))
    try:
        started = start_http_server(port, addr=addr, registry=reg)
    except OSError as exc:  # most often EADDRINUSE: another controller already serves there
        raise MetricsError(f"cannot serve metrics on {addr}:{port}: {exc.strerror or exc}"
                           + (" (another mrc-controller running? choose another --metrics-port)"
                              if exc.errno == errno.EADDRINUSE else "")) from None
    server, thread = started if isinstance(started, tuple) else (None, None)
    return reg, server, thread
