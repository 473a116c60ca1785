"""Drift written behind the controller's back, on a real softswitch running p4src/mrc_switch.p4 over
real gRPC: reconcile puts back the routing tables' default (drop_no_route, not const), names every
entity it repairs in its log, and a session that becomes primary again after another client held the
switch counts a new generation (the daemon re-converges on it at once)."""
from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest
from p4.v1 import p4runtime_pb2
from p4rt_sessions import primary_session, tiny_fabric

from controller import build_plan, load_topology, p4rt
from controller.mapping import A_DROP_NO_ROUTE, A_NEXT_HOP, T_ROUTE_V6, desired_state
from controller.reconcile import reconcile

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "p4src" / "mrc_switch.p4"
TOPO = ROOT / "examples" / "small.yaml"
MOD = p4runtime_pb2.Update.MODIFY


@pytest.fixture(scope="module")
def session():
    with primary_session(PROGRAM) as s:
        yield s


@pytest.fixture(scope="module")
def desired(session):
    d = desired_state(session.names, build_plan(load_topology(TOPO)).switches["p1s1"])
    reconcile(session, d)
    return d


def _route_default(s) -> p4runtime_pb2.Entity:
    probe = p4runtime_pb2.Entity()
    probe.table_entry.table_id = s.names.table(T_ROUTE_V6).preamble.id
    probe.table_entry.is_default_action = True
    (e,) = s.read([probe])
    return e


def test_changed_route_default_is_put_back_and_logged(session, desired, caplog):
    s = session
    assert reconcile(s, desired).written == 0
    drop = s.names.action(A_DROP_NO_ROUTE).preamble.id
    assert _route_default(s).table_entry.action.action.action_id == drop
    bad = s.names.default_entry(T_ROUTE_V6, A_NEXT_HOP, port=1, dst_mac=1, src_mac=2)
    s.write([p4runtime_pb2.Update(type=MOD, entity=bad)])  # every miss now forwarded out of port 1
    assert _route_default(s).table_entry.action.action.action_id != drop
    with caplog.at_level(logging.INFO, logger="controller.reconcile"):
        res = reconcile(s, desired, logging.getLogger("controller.reconcile"))
    assert (res.inserted, res.modified, res.deleted) == (0, 1, 0)
    assert _route_default(s).table_entry.action.action.action_id == drop
    drift = [r for r in caplog.records if r.getMessage() == "drift"]
    assert [r.fields for r in drift] == [{
        "switch": "s1", "op": "MODIFY", "entity": "default of route_v6 -> drop_no_route()",
        "was": "default of route_v6 -> set_next_hop(port=1, dst_mac=00:00:00:00:00:01, src_mac=00:00:00:00:00:02)"}]


def test_deleted_route_is_logged_with_its_key(session, desired, caplog):
    s = session
    tid = s.names.table(T_ROUTE_V6).preamble.id
    route = next(e for e in desired.entries if e.table_entry.table_id == tid
                 and e.table_entry.match[0].lpm.prefix_len == 48)
    s.write([p4runtime_pb2.Update(type=p4runtime_pb2.Update.DELETE, entity=route)])
    with caplog.at_level(logging.INFO, logger="controller.reconcile"):
        assert reconcile(s, desired, logging.getLogger("controller.reconcile")).inserted == 1
    (rec,) = [r for r in caplog.records if r.getMessage() == "drift"]
    assert rec.fields["op"] == "INSERT" and rec.fields["entity"].startswith("route_v6 dst_addr=fc00:0:2101::/48 -> ")


def test_primary_again_after_another_client_is_a_new_generation(session):
    s = session
    gen = s.generation
    other = p4rt.P4RuntimeClient(s.address, s.device_id, election_id=s.election_id + 100)
    try:
        end = time.monotonic() + 5
        while s.is_primary and time.monotonic() < end:
            time.sleep(0.02)
        assert not s.is_primary
    finally:
        other.close()
    end = time.monotonic() + 5
    while not s.is_primary and time.monotonic() < end:  # takes over above the highest id seen
        time.sleep(0.02)
    assert s.is_primary and s.generation == gen + 1




def test_a_hung_switch_does_not_hold_up_the_others(tmp_path):
    """A switch whose process is stopped (SIGSTOP: its TCP connection stays open, RPCs never answer)
    costs its own worker the RPC timeout, not the other switches' reconcile period."""
    import os
    import signal
    import threading

    from controller.daemon import Controller, Options
    from mrc_fabric.targets import load_pipeline

    with tiny_fabric(tmp_path, PROGRAM) as (plan, spine, leaf):
        ctl = Controller(plan, load_pipeline("softswitch"), Options(
            election_id=9, reconcile_interval_s=1.0, counters_interval_s=0.5, wiring_interval_s=60,
            addresses={"p1s1": spine.grpc_addr, "p1l1": leaf.grpc_addr}))
        stop = threading.Event()
        runner = threading.Thread(target=ctl.run, args=(stop,), daemon=True)
        runner.start()
        try:
            end = time.monotonic() + 30
            while not all(st.state == "converged" for st in ctl.status.values()) and time.monotonic() < end:
                time.sleep(0.1)
            assert all(st.state == "converged" for st in ctl.status.values())
            os.kill(spine.process.pid, signal.SIGSTOP)
            try:
                time.sleep(1.5)  # the spine's next reconcile and counter read are now stuck
                s = ctl.sessions["p1l1"]
                tid = s.names.table(T_ROUTE_V6).preamble.id
                route = next(e for e in ctl.desired("p1l1").entries if e.table_entry.table_id == tid
                             and e.table_entry.match[0].lpm.prefix_len == 48)
                s.write([p4runtime_pb2.Update(type=p4runtime_pb2.Update.DELETE, entity=route)])
                t0 = time.monotonic()
                probe = p4runtime_pb2.Entity()
                probe.CopyFrom(route)
                probe.table_entry.ClearField("action")
                while not s.read([probe]) and time.monotonic() - t0 < 10:
                    time.sleep(0.1)
                took = time.monotonic() - t0
                assert s.read([probe]), "the leaf's route was not put back within 10 s"
                assert took < 4.0, f"the leaf waited {took:.1f} s for the hung spine (reconcile period 1 s)"
            finally:
                os.kill(spine.process.pid, signal.SIGCONT)
        finally:
            stop.set()
            runner.join(30)
            ctl.close()


def test_wrong_device_id_is_named_in_the_connect_error():
    """A switch that ends the stream instead of answering the arbitration (device id 42 where it runs
    as 1: NOT_FOUND) was reported as "no arbitration answer", the cause only in a separate warning."""
    from controller.session import SessionError, SwitchSession
    from softswitch.api import SoftSwitch

    with SoftSwitch(PROGRAM, cpu_port=255, device_id=1) as sw:
        s = SwitchSession("s1", sw.grpc_addr, 42, election_id=3)
        try:
            with pytest.raises(SessionError) as ei:
                s.connect(3.0)
        finally:
            s.close()
    assert "no arbitration answer" not in str(ei.value)
    assert "device id 42" in str(ei.value) and "NOT_FOUND" in str(ei.value) and "is not 1" in str(ei.value)


def test_a_full_table_does_not_leave_the_defaults_unwritten():
    """More watch QPs than telemetry_watch holds (256): the entries phase fails with the switch's
    per-update errors, and the error goes up -- but the tables' defaults (the switch id of its
    telemetry, the routing misses) are written first, not skipped with every phase after the failed
    one (a switch left with switch id 0 named no switch in its telemetry)."""
    from controller.mapping import A_SWITCH_ID, T_SWITCH_INFO
    from controller.session import SessionError

    with primary_session(PROGRAM) as s:
        plan = build_plan(load_topology(TOPO)).switches["p1l1"]
        d = desired_state(s.names, plan, watch_qps=tuple(range(1, 301)))
        with pytest.raises(SessionError, match="RESOURCE_EXHAUSTED"):
            reconcile(s, d)
        probe = p4runtime_pb2.Entity()
        probe.table_entry.table_id = s.names.table(T_SWITCH_INFO).preamble.id
        probe.table_entry.is_default_action = True
        (e,) = s.read([probe])
        act = e.table_entry.action.action
        assert act.action_id == s.names.action(A_SWITCH_ID).preamble.id
        assert int.from_bytes(act.params[0].value, "big") != 0
