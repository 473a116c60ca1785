"""P4Runtime spec corners over real gRPC: a MODIFY that carries only the key, wildcard reads of
extern entries (the spec's read of the entire forwarding state), counter/meter/register reads with
the wildcard id and an index, and a ValueSetEntry read that sets members."""
from __future__ import annotations

import grpc
import pytest
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2
from test_p4rt_server import l2_entry, upd

I, M = p4runtime_pb2.Update.INSERT, p4runtime_pb2.Update.MODIFY
E = p4runtime_pb2.Entity
TE = p4runtime_pb2.TableEntry


def rpc_code(fn) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as ei:
        fn()
    return ei.value.code()


def _acl_entry(rig, **kw) -> TE:
    te = TE(table_id=rig.ids["MyIngress.acl"], priority=10, **kw)
    f = te.match.add(field_id=1)
    f.ternary.value, f.ternary.mask = b"\x06", b"\xff"
    te.action.action.action_id = rig.ids["MyIngress.acl_deny"]
    return te


def test_a_modify_with_only_the_key_changes_nothing(rig):
    """Spec "Action Specification": a MODIFY with the action unset that modifies no direct resource
    is a no-op.  It cleared the entry's metadata and controller_metadata (and its idle timeout)."""
    rig.stream()
    rig.set_pipeline()
    te = l2_entry(rig, 1, 1)  # l2 has a direct counter, no meter
    te.controller_metadata, te.metadata = 7, b"cookie"
    te.counter_data.packet_count = 3
    rig.write(upd(I, table_entry=te))
    key = TE(table_id=te.table_id)
    key.match.extend(te.match)
    rig.write(upd(M, table_entry=key))
    q = TE(table_id=te.table_id)
    q.counter_data.SetInParent()
    (got,) = rig.read(E(table_entry=q))
    g = got.table_entry
    assert (g.controller_metadata, g.metadata, g.counter_data.packet_count) == (7, b"cookie", 3)
    assert [p.value for p in g.action.action.params] == [b"\x01", b"\x01"]  # canonical, unchanged
    # a MODIFY that sets something is not key-only: full snapshot of what it carries, as before
    key.metadata = b"new"
    rig.write(upd(M, table_entry=key))
    (got,) = rig.read(E(table_entry=q))
    assert (got.table_entry.metadata, got.table_entry.controller_metadata) == (b"new", 0)
    assert got.table_entry.action == g.action and got.table_entry.counter_data.packet_count == 3


def test_a_key_only_modify_still_resets_a_direct_meter(rig):
    """Spec "Direct Resources": meter_config unset in a MODIFY resets the meter (so such a MODIFY does
    modify a direct resource); the entry's metadata stays."""
    rig.stream()
    rig.set_pipeline()
    te = _acl_entry(rig, controller_metadata=7, metadata=b"cookie")  # acl has a direct meter
    te.meter_config.cir, te.meter_config.cburst, te.meter_config.pir, te.meter_config.pburst = 10, 10, 20, 20
    rig.write(upd(I, table_entry=te))
    key = TE(table_id=te.table_id, priority=te.priority)
    key.match.extend(te.match)
    rig.write(upd(M, table_entry=key))
    q = TE(table_id=te.table_id)
    q.meter_config.SetInParent()
    (got,) = rig.read(E(table_entry=q))
    g = got.table_entry
    assert (g.controller_metadata, g.metadata, g.action.action.action_id) == (7, b"cookie", te.action.action.action_id)
    assert not g.HasField("meter_config")


def test_the_spec_read_of_the_whole_forwarding_state_answers(rig):
    """Spec "Wildcard Reads": the read of the entire forwarding state starts with extern_entry {}
    ("all extern instances for all supported extern types"); softswitch supports none, so that part
    answers nothing instead of failing the Read with UNIMPLEMENTED."""
    rig.stream()
    rig.set_pipeline()
    rig.write(upd(I, table_entry=l2_entry(rig, 1, 1)))
    got = rig.read(E(extern_entry=p4runtime_pb2.ExternEntry()), E(table_entry=TE()),
                   E(action_profile_member=p4runtime_pb2.ActionProfileMember()),
                   E(action_profile_group=p4runtime_pb2.ActionProfileGroup()))
    assert [e.WhichOneof("entity") for e in got] == ["table_entry"]
    # an extern type the P4Info does not declare is a P4 id not in the P4Info
    assert rpc_code(lambda: rig.read(E(extern_entry=p4runtime_pb2.ExternEntry(extern_type_id=0x81)))) \
        == grpc.StatusCode.NOT_FOUND
    assert rpc_code(lambda: rig.write(upd(I, extern_entry=p4runtime_pb2.ExternEntry(extern_type_id=0x81)))) \
        == grpc.StatusCode.UNKNOWN  # writes stay UNIMPLEMENTED per update


def test_a_wildcard_id_with_an_index_reads_every_cell(rig):
    """p4runtime.proto, CounterEntry / MeterEntry: with the id 0 the scope is every cell of every
    array.  An index with id 0 answered that cell of each array, and OUT_OF_RANGE when one array
    (drop_reasons, 64 cells) was shorter than the index."""
    rig.stream()
    rig.set_pipeline()
    info = rig.p4info
    for kind, arrays in (("counter_entry", info.counters), ("meter_entry", info.meters),
                         ("register_entry", info.registers)):
        ent = E()
        getattr(ent, kind).index.index = 100
        got = rig.read(ent)
        assert len(got) == sum(a.size for a in arrays), kind


def test_a_value_set_read_must_not_set_members():
    """p4runtime.proto, ValueSetEntry: "The 'match' field must never be set in the ReadRequest"."""
    from p4rt_helpers import load_p4info
    from test_p4rt_server import Rig

    p4info = load_p4info()
    vs = p4info.value_sets.add()
    vs.preamble.id, vs.preamble.name = 0x03000001, "P.types"
    vs.match.add(id=1, bitwidth=16, match_type=p4info_pb2.MatchField.EXACT)
    vs.size = 4
    rig = Rig()
    try:
        rig.stream()
        rig.set_pipeline(p4info=p4info)
        q = p4runtime_pb2.ValueSetEntry(value_set_id=vs.preamble.id)
        assert len(rig.read(E(value_set_entry=q))) == 1
        q.members.add().match.add(field_id=1).exact.value = b"\x01"
        assert rpc_code(lambda: rig.read(E(value_set_entry=q))) == grpc.StatusCode.INVALID_ARGUMENT
    finally:
        rig.close()


def test_meter_counter_data_on_a_table_without_a_direct_meter_is_refused(rig):
    """p4runtime.proto, TableEntry: setting a direct resource field the table does not have, in any
    table write, returns an error (meter_config did; meter_counter_data was accepted and dropped)."""
    rig.stream()
    rig.set_pipeline()
    te = l2_entry(rig, 1, 1)  # l2: a direct counter, no direct meter
    te.meter_counter_data.SetInParent()
    de = TE(table_id=te.table_id, is_default_action=True)
    de.action.action.action_id = rig.ids["MyIngress.l2_miss"]
    de.meter_counter_data.SetInParent()
    with pytest.raises(grpc.RpcError) as ei:
        rig.write(upd(I, table_entry=te), upd(M, table_entry=de))
    from p4rt_helpers import write_errors
    assert [c for c, _ in write_errors(ei.value)] == [3, 3]  # INVALID_ARGUMENT
    assert rig.read(E(table_entry=TE(table_id=te.table_id))) == []


def _digest_switch():
    """A switch state with the test program's P4Info, its digests on a clock the test sets (``now[0]``,
    ns) and delivering into ``got``; with the ``learn_t`` digest's id."""
    from p4rt_helpers import load_p4info

    from softswitch.runtime import DigestState, SwitchState

    now = [0]
    p4info = load_p4info()
    s = SwitchState(p4info)
    s.digests = DigestState(p4info, clock_ns=lambda: now[0])
    got = []
    s.digests.set_sink(got.append)
    return s, now, got, s.digest_ids["learn_t"]


def test_a_shorter_ack_timeout_frees_what_was_sent_before():
    """Spec "DigestEntry": cache entries go when they are ack_timeout_ns old, the timeout in force
    (its pseudo-code: now - sent_time >= ack_timeout_ns(digest_id)); with 0 "the cache must always be
    an empty set".  A MODIFY from 300 ms to 0 kept a message sent just before held for 300 ms."""
    s, now, got, did = _digest_switch()
    cfg = p4runtime_pb2.DigestEntry(digest_id=did, config=p4runtime_pb2.DigestEntry.Config(
        max_timeout_ns=0, max_list_size=1, ack_timeout_ns=300_000_000))
    s.write(upd(I, digest_entry=cfg))
    s.digests.emit(did, (0xCC, 3))
    now[0] = 1_000_000
    s.digests.emit(did, (0xCC, 3))  # sent, not acked, younger than 300 ms: held
    assert len(got) == 1
    cfg.config.ack_timeout_ns = 0
    s.write(upd(M, digest_entry=cfg))
    now[0] = 2_000_000
    s.digests.emit(did, (0xCC, 3))
    assert len(got) == 2
    cfg.config.ack_timeout_ns = 10_000_000  # a longer one holds again, counted from the send
    s.write(upd(M, digest_entry=cfg))
    now[0] = 11_000_000
    s.digests.emit(did, (0xCC, 3))
    assert len(got) == 2
    now[0] = 12_000_000
    s.digests.emit(did, (0xCC, 3))
    assert len(got) == 3


def test_no_digest_list_is_longer_than_max_list_size():
    """Spec "DigestEntry": max_list_size is "the maximum digest list size ... sent by the server as a
    single DigestList".  After a MODIFY lowered it under what was pending, the next message sent
    every pending one in one list (6 with max_list_size 2)."""
    s, now, got, did = _digest_switch()
    cfg = p4runtime_pb2.DigestEntry(digest_id=did, config=p4runtime_pb2.DigestEntry.Config(
        max_timeout_ns=1000, max_list_size=0))
    s.write(upd(I, digest_entry=cfg))
    for i in range(5):
        s.digests.emit(did, (i, 1))
    cfg.config.max_list_size = 2
    s.write(upd(M, digest_entry=cfg))
    s.digests.emit(did, (5, 1))
    assert [len(x.values) for x in got] == [2, 2, 2]
    for i in range(6, 9):
        s.digests.emit(did, (i, 1))
    assert [len(x.values) for x in got] == [2, 2, 2, 2]
    now[0] = 5000  # the timeout sends what is left, still in lists of at most 2
    cfg.config.max_list_size = 0
    s.write(upd(M, digest_entry=cfg))
    s.digests.emit(did, (9, 1))
    s.digests.emit(did, (10, 1))
    now[0] = 7000
    s.digests.poll()
    assert [len(x.values) for x in got][4:] == [3]
    assert sorted(v for x in got for v, _ in x.values) == list(range(11))
