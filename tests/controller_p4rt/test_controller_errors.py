"""Issue 14 finding 7: a second controller gets a clear error, not a traceback or "unreachable".

A busy metrics port is reported with the address and a hint; a taken election id is named as
such (the switch ends the stream with INVALID_ARGUMENT, as the P4Runtime spec says).  Real gRPC
on loopback against an in-process softswitch P4Runtime server; no namespaces."""
from __future__ import annotations

import logging
import os
import subprocess
import sys

import pytest

from controller import build_plan, load_topology
from controller.daemon import Controller, Options
from controller.metrics import MetricsError, MetricsSnapshot, serve
from controller.session import ElectionIdInUse, SwitchSession
from mrc_fabric.targets import load_pipeline
from softswitch.p4rt import P4RuntimeServer
from softswitch.runtime import SwitchState

REPO = os.path.join(os.path.dirname(__file__), "..", "..")
TOPO = os.path.join(REPO, "examples", "small.yaml")


@pytest.fixture(scope="module")
def pipeline():
    return load_pipeline("softswitch", os.environ.get("MRC_P4_PROGRAM"))


def test_metrics_port_in_use_is_a_clear_error(busy_port):
    with pytest.raises(MetricsError) as ei:
        serve(lambda: MetricsSnapshot({}, {}, 0, []), busy_port)
    msg = str(ei.value)
    assert f"127.0.0.1:{busy_port}" in msg and "another mrc-controller" in msg


@pytest.mark.parametrize("flag, said", [("--metrics-port", "cannot serve metrics on"),
                                         ("--view-port", "cannot serve the live view on")])
def test_cli_busy_metrics_or_view_port_exits_2_without_traceback(busy_port, flag, said):
    """A second instance on the metrics port, or a busy --view-port (it was an OSError traceback,
    exit 1): exit 2 with a message naming the address and the flag."""
    p = subprocess.run([sys.executable, "-m", "controller", "run", "-t", TOPO, "--once", "--retries", "1",
                        "--grpc-base-port", "1", flag, str(busy_port)],
                       check=False, capture_output=True, text=True, timeout=120, cwd=REPO)
    assert p.returncode == 2, p.stderr[-2000:]
    assert "Traceback" not in p.stderr
    assert f"{said} 127.0.0.1:{busy_port}" in p.stderr
    if flag == "--view-port":
        assert "--view-port" in p.stderr


def test_taken_election_id_is_named(pipeline):
    plan = build_plan(load_topology(TOPO))
    name = next(iter(plan.switches))
    dev = plan.switches[name].device_id
    srv = P4RuntimeServer(dev, lambda info, cfg: SwitchState(info), lambda f: None, "127.0.0.1:0")
    port = srv.start()
    first = SwitchSession(name, f"127.0.0.1:{port}", dev, 7)
    ctl = None
    try:
        first.connect(5)
        assert first.wait_primary(5)
        # the session alone: the error names the election id
        second = SwitchSession(name, f"127.0.0.1:{port}", dev, 7)
        with pytest.raises(ElectionIdInUse) as ei:
            second.connect(5)
        assert "election id 7 is already used by another controller" in str(ei.value)
        second.close()
        # the daemon: state and log say so (not "unreachable / no arbitration answer")
        opts = Options(election_id=7, addresses={n: ("127.0.0.1:1" if n != name else f"127.0.0.1:{port}")
                                                 for n in plan.switches}, connect_timeout_s=3)
        records: list[logging.LogRecord] = []
        log = logging.getLogger("test.controller.election")
        log.addHandler(type("H", (logging.Handler,), {"emit": lambda self, r: records.append(r)})())
        ctl = Controller(plan, pipeline, opts, log)
        assert ctl._attempt(name) is None
        st = ctl.status[name]
        assert st.state == "election_id_in_use" and "already used" in st.last_error
        assert any(r.levelno == logging.ERROR and "election id taken" in r.getMessage() for r in records)
        assert first.is_primary  # the first controller is untouched
    finally:
        if ctl is not None:
            ctl.close()
        first.close()
        srv.stop()


def _while_held(holder: SwitchSession, hold_s: float, call):
    """``call()`` while ``holder`` keeps its election id for ``hold_s`` more: (its result, seconds taken)."""
    import threading
    import time

    release = threading.Timer(hold_s, holder.close)
    release.start()
    t0 = time.monotonic()
    try:
        out = call()
    finally:
        release.join()
    return out, time.monotonic() - t0


def test_port_admin_waits_for_its_election_id_to_be_free(pipeline):
    """PI drops a closed client's connection only once its stream handler returns, so a controller
    that writes a port admin change right after another client with its election id closed (a PTF
    test hands a switch to the controller that way) first finds the id taken: it retries, bounded,
    instead of failing with "port admin change not written" (SwitchSession.connect waits for the id)."""
    import time

    from controller.p4rt import ELECTION_ID_WAIT_S
    from controller.plan import PortSetting
    from controller.session import SessionError

    plan = build_plan(load_topology(TOPO))
    name = next(iter(plan.switches))
    dev = plan.switches[name].device_id
    srv = P4RuntimeServer(dev, lambda info, cfg: SwitchState(info), lambda f: None, "127.0.0.1:0")
    addr = f"127.0.0.1:{srv.start()}"
    holder = SwitchSession(name, addr, dev, 7)
    opts = Options(election_id=7, addresses={n: ("127.0.0.1:1" if n != name else addr) for n in plan.switches},
                   connect_timeout_s=3)
    ctl = Controller(plan, pipeline, opts, logging.getLogger("test.controller.port_admin"))
    port = next(ps.port for ps in plan.switches[name].of(PortSetting))
    try:
        holder.connect(5)
        assert holder.wait_primary(5)
        _, took = _while_held(holder, 0.5, lambda: ctl.set_port_admin(name, port, False))
        assert 0.4 < took < ELECTION_ID_WAIT_S + 1, took
        assert ctl.sessions[name].is_primary
        # a switch another controller holds with a higher id: not a leftover of ours, final at once
        other = SwitchSession(name, addr, dev, 8)
        other.connect(5)
        assert other.wait_primary(5)
        ctl.sessions[name].close()
        try:
            t0 = time.monotonic()
            with pytest.raises(SessionError, match="port admin change not written"):
                ctl.set_port_admin(name, port, True)
            assert time.monotonic() - t0 < ELECTION_ID_WAIT_S / 2  # not the wait for a freed id
        finally:
            other.close()
    finally:
        ctl.close()
        holder.close()
        srv.stop()


def test_client_waits_for_its_election_id_to_be_free():
    """The PTF and bench client (controller.p4rt.P4RuntimeClient) connecting with the election id a
    test's previous client held a moment ago: the switch may still hold it (PI drops a connection
    once its stream handler returns), so the client reopens its stream and retries, bounded, and
    names the real error when the id stays taken (it said "no arbitration answer" after 5 s)."""
    import time

    import grpc

    from controller.p4rt import ELECTION_ID_WAIT_S, P4RuntimeClient, P4RuntimeError

    srv = P4RuntimeServer(1, lambda info, cfg: SwitchState(info), lambda f: None, "127.0.0.1:0")
    addr = f"127.0.0.1:{srv.start()}"
    holder = SwitchSession("s", addr, 1, 1)
    client = None
    try:
        holder.connect(5)
        assert holder.wait_primary(5)
        client, took = _while_held(holder, 0.5, lambda: P4RuntimeClient(addr, 1, 1, timeout_s=5))
        assert client.primary and 0.4 < took < ELECTION_ID_WAIT_S + 1, took
        t0 = time.monotonic()
        with pytest.raises(P4RuntimeError) as ei:  # the id stays taken (by this client)
            P4RuntimeClient(addr, 1, 1, timeout_s=5)
        assert ei.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "election id" in ei.value.details().lower()
        assert ELECTION_ID_WAIT_S - 0.5 < time.monotonic() - t0 < ELECTION_ID_WAIT_S + 5
    finally:
        if client is not None:
            client.close()
        holder.close()
        srv.stop()
