"""``converge_all`` (``mrc-controller run --once``) says how far it is while the switches work: a first
pipeline push kept the log silent for about 7 of the 10.5 s on 8 softswitches (a new user took it for
a hang).  Real gRPC on loopback against in-process softswitch P4Runtime servers; no namespaces."""
from __future__ import annotations

import logging
import os

import pytest

from controller import build_plan, load_topology
from controller.daemon import Controller, Options
from mrc_fabric.targets import load_pipeline
from softswitch.p4rt import P4RuntimeServer
from softswitch.runtime import SwitchState

TOPO = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "small.yaml")
PHASES = {"waiting", "connecting", "pushing pipeline", "reconciling"}


@pytest.mark.timeout(180)
def test_converge_all_logs_progress_and_each_pipeline_set(caplog):
    pipeline = load_pipeline("softswitch", os.environ.get("MRC_P4_PROGRAM"))
    plan = build_plan(load_topology(TOPO))
    servers, addrs = [], {}
    try:
        for name, sp in plan.switches.items():
            srv = P4RuntimeServer(sp.device_id, lambda info, cfg: SwitchState(info), lambda f: None, "127.0.0.1:0")
            servers.append(srv)
            addrs[name] = f"127.0.0.1:{srv.start()}"
        # a progress line every 50 ms: the pushes and reconciles of 8 switches take far longer than that
        ctl = Controller(plan, pipeline, Options(connect_timeout_s=5, addresses=addrs, progress_interval_s=0.05),
                         logging.getLogger("test.progress"))
        try:
            with caplog.at_level(logging.INFO, logger="test.progress"):
                assert all(ctl.converge_all(attempts=1).values())
        finally:
            ctl.close()
    finally:
        for srv in servers:
            srv.stop()
    recs = [r for r in caplog.records if r.name == "test.progress"]
    progress = [r.fields for r in recs if r.getMessage() == "converging"]
    assert progress, "no progress line while the switches converged"
    n = len(plan.switches)
    for f in progress:
        busy = [s for names in f["busy"].values() for s in names]  # phase -> its switches
        assert f["switches"] == n and 0 <= f["done"] < n and len(busy) == len(set(busy)) == n - f["done"]
        assert set(busy) <= set(plan.switches) and set(f["busy"]) <= PHASES
    assert [f["done"] for f in progress] == sorted(f["done"] for f in progress)  # the count only grows
    assert "pushing pipeline" in {p for f in progress for p in f["busy"]}
    assert sorted(r.fields["switch"] for r in recs if r.getMessage() == "pipeline set") == sorted(plan.switches)
    # the closing summary is still the one line it was
    assert [r.fields["converged"] for r in recs if r.getMessage() == "converge"] == [n]
