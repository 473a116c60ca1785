"""Clone-session statuses the controller decides on, against a real softswitch answering as
bmv2's PI server does (p4lang/PI proto/frontend/src/pre_clone_mgr.cpp, docs/controller.md): a
Read of one missing session is NOT_FOUND (reconcile: nothing there yet, insert it); a DELETE of
a missing one fails that update with NOT_FOUND; an INSERT of an existing one with ALREADY_EXISTS."""
from __future__ import annotations

from pathlib import Path

import grpc
import pytest
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2
from p4rt_sessions import primary_session

from controller.mapping import DesiredState, clone_session
from controller.reconcile import read_contents, reconcile
from controller.session import SessionError

PROGRAM = Path(__file__).resolve().parents[2] / "p4src" / "mrc_switch.p4"
INSERT, DELETE = p4runtime_pb2.Update.INSERT, p4runtime_pb2.Update.DELETE


@pytest.fixture(scope="module")
def session():
    with primary_session(PROGRAM) as s:
        yield s


def _code(fn) -> tuple[grpc.StatusCode | None, list[int]]:
    with pytest.raises(SessionError) as ei:
        fn()
    return ei.value.code, [e.code for e in ei.value.errors]


def test_clone_session_codes_and_reconcile(session):
    s = session
    want = clone_session(100, 255)
    probe = p4runtime_pb2.Entity()
    probe.packet_replication_engine_entry.clone_session_entry.session_id = 100
    assert _code(lambda: s.read([probe]))[0] == grpc.StatusCode.NOT_FOUND
    assert _code(lambda: s.write([p4runtime_pb2.Update(type=DELETE, entity=want)])) == \
        (grpc.StatusCode.UNKNOWN, [code_pb2.NOT_FOUND])
    desired = DesiredState(pre=[want])
    assert read_contents(s, desired).pre == {}  # NOT_FOUND: not there yet
    res = reconcile(s, desired)
    assert (res.inserted, res.modified, res.deleted) == (1, 0, 0)
    assert [e.packet_replication_engine_entry.clone_session_entry.session_id for e in s.read([probe])] == [100]
    assert _code(lambda: s.write([p4runtime_pb2.Update(type=INSERT, entity=want)])) == \
        (grpc.StatusCode.UNKNOWN, [code_pb2.ALREADY_EXISTS])
    assert reconcile(s, desired).written == 0
