"""Backups: a backup controller reads the switches' counters (a Read is open to every client; only
Write and packet I/O are the primary's), and two backups that take over at the same moment end with
one primary and one backup, not with one of them locked out.  Real gRPC on loopback against
in-process softswitch P4Runtime servers; no namespaces."""
from __future__ import annotations

import logging
import os
import time

import grpc
import pytest

from controller import build_plan, load_topology
from controller.daemon import Controller, Options
from controller.plan import PortSetting
from controller.session import SessionError, SwitchSession
from mrc_fabric.targets import load_pipeline
from softswitch.p4rt import P4RuntimeServer
from softswitch.runtime import SwitchState

REPO = os.path.join(os.path.dirname(__file__), "..", "..")
TOPO = os.path.join(REPO, "examples", "small.yaml")


@pytest.fixture(scope="module")
def pipeline():
    return load_pipeline("softswitch", os.environ.get("MRC_P4_PROGRAM"))


def _server(dev: int) -> tuple[P4RuntimeServer, str]:
    srv = P4RuntimeServer(dev, lambda info, cfg: SwitchState(info), lambda f: None, "127.0.0.1:0")
    return srv, f"127.0.0.1:{srv.start()}"


def _wait(cond, timeout_s: float) -> bool:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


def test_a_backup_controller_reads_counters_and_sends_no_probe(pipeline):
    plan = build_plan(load_topology(TOPO))
    name = next(iter(plan.switches))
    srv, addr = _server(plan.switches[name].device_id)
    addrs = {n: (addr if n == name else "127.0.0.1:1") for n in plan.switches}
    primary = Controller(plan, pipeline, Options(election_id=10, connect_timeout_s=3, addresses=addrs),
                         logging.getLogger("test.backup.primary"))
    backup = Controller(plan, pipeline, Options(election_id=5, connect_timeout_s=3, addresses=addrs),
                        logging.getLogger("test.backup.backup"))
    try:
        # the primary is connected, the switch has no pipeline yet: the backup has nothing to resolve
        primary.sessions[name].connect(3)
        assert primary.sessions[name].wait_primary(3)
        assert backup.converge_switch(name) is False
        assert backup.sessions[name].names is None
        assert primary.converge_switch(name)
        # its next pass finds the primary's pipeline and reads the counters with it
        assert backup.converge_switch(name) is False and backup.status[name].state == "backup"
        backup.poll_counters([name])
        snap = backup.metrics_snapshot(outside_drops=False)
        assert name in snap.counters, "a backup controller exported no counter of the switch"
        assert snap.counters[name].tables  # direct counters too
        # a backup never sends a PacketOut: its wiring round skips the switch
        assert name in backup.wiring.check(0.2).skipped
        # a reconnect forgets the names; the next pass resolves them again (same cookie: no push)
        pushes = backup.status[name].info.pipeline_pushes
        backup.sessions[name].connect(3)
        assert backup.sessions[name].names is None
        assert backup.converge_switch(name) is False
        assert backup.sessions[name].names is not None
        assert backup.status[name].info.pipeline_pushes == pushes == 0
        # an operator's port change through the backup says why it was not written (it said nothing)
        port = next(ps.port for ps in plan.switches[name].of(PortSetting))
        with pytest.raises(SessionError, match="not the switch's primary") as err:
            backup.set_port_admin(name, port, False)
        assert err.value.code == grpc.StatusCode.PERMISSION_DENIED
    finally:
        primary.close()
        backup.close()
        srv.stop()


def test_two_backups_taking_over_at_once_end_primary_and_backup():
    """A P4Runtime 1.3+ server (softswitch) tells every backup NOT_FOUND when the primary leaves; two
    backups with takeover both re-arbitrate with the highest id + 1, the switch takes the first and ends
    the other's stream (id in use).  The loser must go back to its own id and be a backup again; it kept
    the raised id and was refused as a duplicate on every reconnect while the winner lived."""
    srv, addr = _server(1)
    a = SwitchSession("sw", addr, 1, 10)
    b = SwitchSession("sw", addr, 1, 5)
    c = SwitchSession("sw", addr, 1, 6)
    try:
        for s in (a, b, c):
            s.connect(3)
        assert a.wait_primary(3)
        a.close()
        assert _wait(lambda: b.is_primary or c.is_primary, 5)
        winner, loser = (b, c) if b.is_primary else (c, b)
        assert winner.election_id == 11
        if _wait(lambda: loser.stream_lost.is_set(), 2):  # it asked for 11 too, after the winner
            assert loser.election_id == loser.configured_election_id
            loser.connect(3, id_wait_s=0)  # what the daemon does next: no ElectionIdInUse
        assert loser.stream_up.is_set() and not loser.is_primary
        assert loser.election_id == loser.configured_election_id
        assert winner.is_primary
    finally:
        for s in (a, b, c):
            s.close()
        srv.stop()
