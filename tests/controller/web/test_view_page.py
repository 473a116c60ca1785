"""The live view without a fabric: ViewState's document (rates, link states, postcards) from metrics
snapshots, the HTTP server's routes, and (when chromium is installed) the page rendering it all."""
from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from headless import CHROMIUM, Browser

from controller.metrics import MetricsSnapshot, SwitchInfo
from controller.telemetry import CONGESTION_EVENTS, Postcard, SwitchCounters
from controller.topology import load_topology
from controller.web import ViewServer, ViewState
from mrc.wire.codec import TelemetryRecord

SMALL = Path(__file__).resolve().parents[3] / "examples" / "small.yaml"


class Feed:
    """Snapshots handed to the view one after another (the controller's counter reads over time)."""

    def __init__(self) -> None:
        self.t = 100.0
        self.tx = 0

    def __call__(self) -> MetricsSnapshot:
        topo = load_topology(SMALL)
        self.t += 1.0
        self.tx += 125_000  # bytes per second on p1l1:1 -> 1 Mb/s
        counters = {n: SwitchCounters(read_at=self.t) for n in topo.switches}
        counters["p1l1"] = SwitchCounters(port_tx={1: (self.tx // 1000, self.tx), 3: (0, 0)},
                                          port_rx={3: (self.tx // 2000, self.tx // 2)},
                                          drops={"queue_full": (7, 7000), "no_route": (0, 0)},
                                          congestion={"trimmed": 5, "ecn_marked": 11, "early_drop": 0},
                                          qdepth={1: 3, 3: 14}, read_at=self.t)
        links = {(str(lk.a), str(lk.b)): "up" for lk in topo.links
                 if lk.a.node in topo.switches and lk.b.node in topo.switches}
        links[("p1l1:1", "p1s1:1")] = "dead"
        links[("p2l2:2", "p2s2:2")] = "miswired"
        cards = [Postcard(sw, TelemetryRecord(i + 1, 3, 1, 1000 + i, 10 * (i + 1), i, 0), "Ether / IPv6 / UDP", 5.0 + i)
                 for i, sw in enumerate(("p1l1", "p1s2", "p1l2"))]
        infos = {n: SwitchInfo(connected=n != "p2s2", primary=True, converged=n != "p2s2") for n in topo.switches}
        return MetricsSnapshot(infos, counters, {"p1l1": 1, "p1s2": 1, "p1l2": 1}, cards, links, {"dead": 1})


def test_document_rates_states_postcards() -> None:
    topo = load_topology(SMALL)
    view = ViewState(topo, Feed())
    first = view.document()
    lk = {x["id"]: x for x in first["links"]}
    assert lk["p1l1:1--p1s1:1"]["bps"] is None  # one read: no rate yet
    doc = view.document()
    lk = {x["id"]: x for x in doc["links"]}
    assert lk["p1l1:1--p1s1:1"]["bps"] == pytest.approx(1e6) and lk["p1l1:1--p1s1:1"]["state"] == "dead"
    assert lk["p2l2:2--p2s2:2"]["state"] == "miswired" and lk["p1l2:1--p1s1:2"]["state"] == "up"
    assert lk["h1:1--p1l1:3"]["kind"] == "host" and lk["h1:1--p1l1:3"]["state"] == "host"
    assert lk["h1:1--p1l1:3"]["bps"] == pytest.approx(0.5e6)  # host -> switch direction, rx counter
    assert lk["p1l1:1--p1s1:1"]["since"] == first["links"][0]["since"]  # state unchanged: since kept
    sw = {s["name"]: s for s in doc["switches"]}
    assert sw["p1l1"]["drops"] == {"no_route": 0, "queue_full": 7} and sw["p1l1"]["congestion"]["trimmed"] == 5
    assert sw["p1l1"]["qdepth"] == {"1": 3, "3": 14} and not sw["p2s2"]["connected"]
    assert [p["switch"] for p in doc["postcards"]] == ["p1l1", "p1s2", "p1l2"]
    assert (len(doc["links"]), len(doc["switches"]), len(doc["hosts"])) == (16, 8, 4)


@pytest.fixture
def server():
    srv = ViewServer(("127.0.0.1", 0), ViewState(load_topology(SMALL), Feed())).start()
    try:
        yield srv
    finally:
        srv.stop()


def test_routes(server) -> None:
    for path, ctype in (("", "text/html"), ("view.js", "text/javascript"), ("view.css", "text/css"),
                        ("api/state", "application/json")):
        with urllib.request.urlopen(server.url + path, timeout=5) as r:
            assert r.headers["Content-Type"].startswith(ctype)
            body = r.read()
    assert json.loads(body)["topology"] == "small"
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(server.url + "../etc/passwd", timeout=5)
    assert e.value.code == 404


def test_head_answers_as_get_without_a_body(server) -> None:
    """`curl -I` (a HEAD probe: is the view up?) got 501 Unsupported method."""
    import http.client

    host, port = server.server_address[:2]
    for path, status in (("/", 200), ("/api/state", 200), ("/nope", 404)):
        conn = http.client.HTTPConnection(host, port, timeout=5)
        try:
            conn.request("HEAD", path)
            r = conn.getresponse()
            assert r.status == status and r.read() == b"", path
            assert int(r.headers["Content-Length"]) > 0
            conn.request("GET", path)  # the same connection: no body was left behind to confuse it
            r = conn.getresponse()
            assert r.status == status and len(r.read()) == int(r.headers["Content-Length"])
        finally:
            conn.close()


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not on PATH (apt-get install chromium; scripts/setup.sh does)")
def test_page_renders_counters_states_and_postcards(server, tmp_path: Path) -> None:
    with Browser() as b:
        b.goto(server.url)
        b.wait_js("Number(document.getElementById('status').dataset.polls) >= 3", timeout=20)
        states = b.js("Object.fromEntries([...document.querySelectorAll('[data-link]')]"
                      ".map(e => [e.dataset.link, e.dataset.state]))")
        assert states["p1l1:1--p1s1:1"] == "dead" and states["p2l2:2--p2s2:2"] == "miswired"
        assert states["h1:1--p1l1:3"] == "host"
        row = b.js("[...document.querySelector('[data-row=\"p1l1\"]').children].map(c => c.textContent)")
        assert row == ["p1l1", "converged", "queue_full 7", "5", "11", "14"]
        assert b.js("document.querySelector('[data-row=\"p2s2\"]').children[1].textContent") == "DOWN"
        assert "down" in b.js("document.querySelector('[data-switch=\"p2s2\"]').getAttribute('class')")
        label = b.js("document.querySelector('[data-link=\"p2l1:1--p2s1:1\"] text').textContent")
        assert label == ""  # no counters on that port: no rate shown
        assert b.js("document.querySelector('[data-link=\"p1l1:1--p1s1:1\"] text').textContent") == "DOWN"
        assert b.js("document.querySelector('[data-link=\"h1:1--p1l1:3\"] text').textContent") == "500.0 kb/s"
        cards = b.js("[...document.querySelectorAll('#postcards tbody tr')].map(r => r.children[0].textContent)")
        assert cards == ["p1l2", "p1s2", "p1l1"]  # newest first
        down = b.js("document.getElementById('down-links').textContent")
        assert "p1l1:1--p1s1:1: dead" in down and "p2l2:2--p2s2:2: miswired" in down
        b.screenshot(tmp_path / "view.png")


def test_the_page_reads_congestion_events_by_the_labels_the_controller_gives_them():
    """view.js cannot import the contract: the event labels it reads must be the controller's
    (telemetry.CONGESTION_EVENTS, from define.p4), or its trim/ECN figures would stay 0."""
    js = (Path(__file__).resolve().parents[3] / "controller" / "web" / "static" / "view.js").read_text()
    read = set(re.findall(r"\.congestion \|\| \{\}\)\.(\w+)", js))
    assert read and read <= set(CONGESTION_EVENTS.values()), read
