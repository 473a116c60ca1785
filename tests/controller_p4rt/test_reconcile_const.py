"""Reconcile on a program with ``const entries``: the switch reads them back (``is_const``), and the
controller leaves them alone -- a DELETE of one is refused (P4Runtime "Constant Tables"), so a
reconcile that counted them as extras would never converge.  Real softswitch, real gRPC."""
from __future__ import annotations

from pathlib import Path

import pytest
from p4.v1 import p4runtime_pb2
from p4rt_sessions import primary_session

from controller.mapping import DesiredState
from controller.reconcile import read_contents, reconcile
from controller.session import SessionError

PROGRAM = Path(__file__).resolve().parents[1] / "softswitch" / "data" / "srv6_fabric.p4"


@pytest.fixture(scope="module")
def session():
    with primary_session(PROGRAM) as s:
        yield s


def test_reconcile_leaves_const_entries(session):
    s = session
    ent = p4runtime_pb2.Entity()
    ent.table_entry.SetInParent()
    const = [e for e in s.read([ent]) if e.table_entry.is_const]
    assert len(const) == 2, "the program's two const entries read back marked is_const"
    with pytest.raises(SessionError):  # what a reconcile counting them as extras would send
        s.write([p4runtime_pb2.Update(type=p4runtime_pb2.Update.DELETE, entity=const[0])])
    assert read_contents(s, DesiredState()).entries == {}
    res = reconcile(s, DesiredState())
    assert (res.inserted, res.modified, res.deleted) == (0, 0, 0)
    assert len([e for e in s.read([ent]) if e.table_entry.is_const]) == 2
