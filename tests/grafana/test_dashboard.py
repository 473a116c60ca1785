"""grafana/dashboards/mrc-fabric.json: a well-formed Grafana dashboard whose every query names metrics,
labels and label values that the controller's /metrics endpoint (controller.metrics.serve, over HTTP)
really exports."""
from __future__ import annotations

import json
import re
import socket
import urllib.request
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from controller import p4contract as P4
from controller.metrics import MetricsSnapshot, SwitchInfo, serve
from controller.telemetry import EVENT_EARLY_DROP, EVENT_ECN_MARKED, EVENT_TRIMMED, Postcard, SwitchCounters
from mrc.wire.codec import TelemetryRecord

REPO = Path(__file__).resolve().parents[2]
DASHBOARD = REPO / "grafana" / "dashboards" / "mrc-fabric.json"
PANEL_TYPES = {"timeseries", "stat", "state-timeline", "table", "gauge", "bargauge", "text", "row"}
PROMQL_WORDS = {"sum", "by", "rate", "max", "count", "or", "vector", "without", "min", "avg", "irate", "increase",
                "topk", "on", "bool", "and", "unless"}


def _snapshot() -> MetricsSnapshot:
    # label values as the controller names them (from define.p4, through the contract), so a panel that
    # filters on a reason or event the program no longer has fails here
    drop = {P4.DROP_REASON_NO_ROUTE: (2, 200), P4.DROP_REASON_QUEUE_FULL: (1, 100), P4.DROP_REASON_PORT_ADMIN_DOWN: (0, 0)}
    c = SwitchCounters(port_rx={1: (10, 1000)}, port_tx={1: (12, 1200), 3: (5, 500)},
                       drops={P4.DROP_REASONS[r]: v for r, v in drop.items()},
                       tables={P4.T_INGRESS_ROUTING_ROUTE_V6: (7, 700)}, qdepth={1: 4, 3: 9},
                       congestion={EVENT_TRIMMED: 3, EVENT_ECN_MARKED: 5, EVENT_EARLY_DROP: 0}, read_at=1.0)
    card = Postcard("p1l1", TelemetryRecord(3, 3, 1, 5, 7, 9, 0), "Ether / IPv6", 0.0)
    return MetricsSnapshot({"p1l1": SwitchInfo(connected=True, primary=True, converged=True)}, {"p1l1": c},
                           {"p1l1": 1}, [card], {("p1l1:1", "p1s1:1"): "up", ("p1l1:2", "p1s2:1"): "dead"},
                           {"miswired": 0, "dead": 1, "unexpected": 0},
                           {"p1l1": {"kernel_rx": 0, "queue_tail": 1, "rx_error": 0, "tx": 4}})


@pytest.fixture(scope="module")
def exported() -> dict[str, dict[str, set[str]]]:
    """sample name -> label -> values, from a real scrape of the exporter."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    _, server, _ = serve(_snapshot, port)
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
            text = r.read().decode()
    finally:
        if server is not None:
            server.shutdown()
    out: dict[str, dict[str, set[str]]] = {}
    for fam in text_string_to_metric_families(text):
        for smp in fam.samples:
            labels = out.setdefault(smp.name, {})
            for k, v in smp.labels.items():
                labels.setdefault(k, set()).add(v)
    return out


@pytest.fixture(scope="module")
def dash() -> dict:
    return json.loads(DASHBOARD.read_text())


def _exprs(dash: dict) -> list[str]:
    return [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]


def test_dashboard_is_grafana_json(dash) -> None:
    for key, typ in (("title", str), ("uid", str), ("schemaVersion", int), ("panels", list), ("time", dict),
                     ("templating", dict), ("refresh", str), ("version", int)):
        assert isinstance(dash.get(key), typ), f"dashboard.{key} missing or not {typ.__name__}"
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,40}", dash["uid"])
    assert dash["schemaVersion"] >= 36
    ids = [p["id"] for p in dash["panels"]]
    assert len(ids) == len(set(ids)), "panel ids repeat"
    var_names = {v["name"] for v in dash["templating"]["list"]}
    for p in dash["panels"]:
        assert p["type"] in PANEL_TYPES, p["type"]
        g = p["gridPos"]
        assert all(isinstance(g[k], int) for k in "hwxy") and g["x"] + g["w"] <= 24, p["title"]
        for t in p["targets"]:
            assert t["expr"] and t["refId"]
            uid = t["datasource"]["uid"]
            assert t["datasource"]["type"] == "prometheus" and uid.strip("${}") in var_names
    # no two panels overlap on the 24-column grid
    cells = set()
    for p in dash["panels"]:
        g = p["gridPos"]
        mine = {(x, y) for x in range(g["x"], g["x"] + g["w"]) for y in range(g["y"], g["y"] + g["h"])}
        assert not cells & mine, f"panel {p['title']!r} overlaps another"
        cells |= mine
    titles = " ".join(p["title"].lower() for p in dash["panels"])
    for topic in ("load", "drops by reason", "trims", "ecn", "link state"):
        assert topic in titles, f"no panel about {topic}"


def test_every_queried_metric_label_and_value_is_exported(dash, exported) -> None:
    for expr in _exprs(dash):
        names = set(re.findall(r"\bmrc_[a-z0-9_]+", expr))
        assert names, f"query names no mrc metric: {expr}"
        missing = names - set(exported)
        assert not missing, f"{expr}: not in /metrics: {missing}"
        labels = {k for n in names for k in exported[n]}
        for group in re.findall(r"\bby \(([^)]*)\)", expr):
            for lab in (x.strip() for x in group.split(",")):
                assert lab in labels, f"{expr}: no metric it reads has label {lab!r}"
        for lab, op, val in re.findall(r"(\w+)\s*(=~|=)\s*\"([^\"]*)\"", expr):
            assert lab in labels, f"{expr}: no label {lab!r}"
            values = {v for n in names for v in exported[n].get(lab, ())}
            for v in (val.split("|") if op == "=~" else [val]):
                assert v in values, f"{expr}: label {lab} never has value {v!r} (exported: {sorted(values)})"


def test_provisioning_points_at_the_dashboard_and_the_metrics_port() -> None:
    prom = yaml.safe_load((REPO / "grafana" / "prometheus.yml").read_text())
    from controller.status import DEFAULT_METRICS_PORT

    assert prom["scrape_configs"][0]["static_configs"][0]["targets"] == [f"127.0.0.1:{DEFAULT_METRICS_PORT}"]
    ds = yaml.safe_load((REPO / "grafana" / "provisioning" / "datasources" / "prometheus.yml").read_text())
    assert ds["datasources"][0]["type"] == "prometheus"
    prov = yaml.safe_load((REPO / "grafana" / "provisioning" / "dashboards" / "mrc.yml").read_text())
    assert prov["providers"][0]["options"]["path"] == "/var/lib/grafana/dashboards"
    doc = (REPO / "docs" / "visualize.md").read_text()
    assert "grafana/dashboards:/var/lib/grafana/dashboards" in doc and "grafana/prometheus.yml" in doc
