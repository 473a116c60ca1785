"""Backups: a backup controller reads the switches' counters (a Read is open to every client; only
Write and packet I/O are the primary's), and two backups that take over at the same moment end with
one primary and one backup, not with one of them locked out.  Real gRPC on loopback against
in-process softswitch P4Runtime servers; no namespaces."""
from __future__ import annotations

import time

from controller.session import SwitchSession
from softswitch.p4rt import P4RuntimeServer
from softswitch.runtime import SwitchState


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
