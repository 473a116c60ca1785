"""The demo's live view: a busy metrics or view port costs that endpoint, not the demo.

`mrc-fabric demo` with something already on 9108 (the default --metrics-port) ended in a
MetricsError traceback after the fabric was up: ``LiveView`` caught OSError, but ``serve`` reports a
busy port as ``MetricsError``.  Real controller, real sockets on loopback; no namespaces."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from controller import build_plan, load_topology
from controller.daemon import Controller, Options
from mrc_fabric.demo import LiveView
from mrc_fabric.targets import load_pipeline

SMALL = Path(__file__).resolve().parents[2] / "examples" / "small.yaml"


def test_busy_metrics_and_view_ports_are_reported_not_raised(busy_port):
    ctl = Controller(build_plan(load_topology(SMALL)), load_pipeline("softswitch"), Options())
    try:
        live = LiveView(SimpleNamespace(ctl=ctl), busy_port, busy_port).__enter__()
        try:
            assert live.urls == []
            assert len(live.problems) == 2, live.problems
            assert f"live view not served on port {busy_port}" in live.problems[0]
            assert f"metrics not served on port {busy_port}" in live.problems[1]
            assert "Address already in use" in live.problems[1]
        finally:
            live.__exit__(None, None, None)
    finally:
        ctl.close()
