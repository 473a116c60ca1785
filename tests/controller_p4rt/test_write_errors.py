"""Issue 14 item 2: every per-update error of a large Write reaches the controller.

The details ride in gRPC trailing metadata (about 110 bytes per failed update).  Before, the
controller wrote 500 updates per batch over a channel with gRPC's default 8/16 KiB metadata limit,
so a batch with more than about 150 failures reached it as a bare RESOURCE_EXHAUSTED: it could not
tell which entries failed.  Here a real softswitch (no interfaces, gRPC on loopback) gets 1,000
updates of which 500 fail, in the session's own batches and in one single batch."""
from __future__ import annotations

import ipaddress
import logging
from pathlib import Path

import grpc
import pytest
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2

from controller.mapping import A_NEXT_HOP, T_ROUTE_V6, P4Names
from controller.session import SessionError, SwitchSession

PROGRAM = Path(__file__).resolve().parents[2] / "p4src" / "mrc_switch.p4"
INSERT = p4runtime_pb2.Update.INSERT


@pytest.fixture(scope="module")
def switch():
    from softswitch.api import SoftSwitch

    with SoftSwitch(PROGRAM, cpu_port=255) as sw:
        yield sw


@pytest.fixture
def session(switch):
    s = SwitchSession("s1", switch.grpc_addr, switch.device_id, election_id=7)
    s.connect(5.0)
    assert s.wait_primary(5.0)
    s.use_p4info(s.get_p4info())
    yield s
    ents = s.read([p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(table_id=s.names.table(T_ROUTE_V6)
                                                                            .preamble.id))])
    s.write([p4runtime_pb2.Update(type=p4runtime_pb2.Update.DELETE, entity=e) for e in ents
             if not e.table_entry.is_default_action])
    s.close()


def _route(names: P4Names, i: int) -> p4runtime_pb2.Update:
    t, a = names.table(T_ROUTE_V6), names.actions[A_NEXT_HOP]
    e = p4runtime_pb2.Entity()
    te = e.table_entry
    te.table_id = t.preamble.id
    m = te.match.add(field_id=t.match_fields[0].id)
    m.lpm.value = int(ipaddress.IPv6Address("2001:db8::") + i).to_bytes(16, "big")
    m.lpm.prefix_len = 128
    te.action.action.action_id = a.preamble.id
    for p, v in zip(a.params, (b"\x01", b"\x02\x00\x00\x00\x00\x01", b"\x02\x00\x00\x00\x00\x02"), strict=True):
        te.action.action.params.add(param_id=p.id, value=v)
    return p4runtime_pb2.Update(type=INSERT, entity=e)


@pytest.mark.parametrize("batch", [None, 1000], ids=["session-batches", "one-batch-of-1000"])
def test_every_per_update_error_of_1000_reaches_the_controller(session, batch, caplog):
    names = session.names
    assert session.write([_route(names, i) for i in range(0, 1000, 2)]) == 500  # the even ones exist
    ups = [_route(names, i) for i in range(1000)]  # 1,000 inserts: the 500 even ones already exist
    caplog.set_level(logging.WARNING, logger="controller.session")
    with pytest.raises(SessionError) as ei:
        session.write(ups, **({"chunk": batch} if batch else {}))
    e = ei.value
    assert e.code == grpc.StatusCode.UNKNOWN  # a batch with failed updates (spec §12.3), not RESOURCE_EXHAUSTED
    assert [x.index for x in e.errors] == list(range(0, 1000, 2))
    assert {x.code for x in e.errors} == {code_pb2.ALREADY_EXISTS}
    logged = [r for r in caplog.records if r.getMessage() == "update failed"]
    assert sorted(r.fields["index"] for r in logged) == list(range(0, 1000, 2))
    alias = names.table(T_ROUTE_V6).preamble.alias  # the update in words: its table and its key
    assert all(r.fields["update"].startswith(f"INSERT {alias} dst_addr=") for r in logged)
    # the 500 odd ones went in: a read finds all 1,000
    ent = p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(table_id=names.table(T_ROUTE_V6).preamble.id))
    assert sum(not x.table_entry.is_default_action for x in session.read([ent])) == 1000
