"""P4Runtime spec (v1.4) conformance over real gRPC: table-entry fields (direct resources, default
entry, idle timeout with hits from the compiled pipeline, metadata, priority, canonical match and
bytestring errors), DigestEntry config and list batching, arbitration and roles, pipeline-config
actions, PacketOut errors.  Each check names what the spec prescribes."""
from __future__ import annotations

import time
from pathlib import Path

import grpc
import pytest
from google.rpc import code_pb2
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2
from p4rt_helpers import StreamClient, eid, write_errors
from test_p4rt_server import DEV, SFPC, Rig, l2_entry, upd

I, M, D = p4runtime_pb2.Update.INSERT, p4runtime_pb2.Update.MODIFY, p4runtime_pb2.Update.DELETE
E = p4runtime_pb2.Entity
TE = p4runtime_pb2.TableEntry
IDLE_P4 = Path(__file__).parent / "data" / "idle_timeout.p4"


def rpc_code(fn) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as ei:
        fn()
    return ei.value.code()


def batch_codes(rig, *updates) -> list[int]:
    with pytest.raises(grpc.RpcError) as ei:
        rig.write(*updates)
    assert ei.value.code() == grpc.StatusCode.UNKNOWN
    return [c for c, _ in write_errors(ei.value)]


# ---- table entries ------------------------------------------------------------------------------
def test_direct_resources_metadata_and_default_entry(rig):
    rig.stream()
    rig.set_pipeline()
    l2 = rig.ids["MyIngress.l2"]  # has a direct counter (BOTH)
    te = l2_entry(rig, 1, 1)
    te.counter_data.byte_count, te.counter_data.packet_count = 100, 2
    te.controller_metadata, te.metadata = 77, b"\x00cookie"
    rig.write(upd(I, table_entry=te))
    # read without counter_data: the response has none; with it (an empty message): the counts
    (got,) = rig.read(E(table_entry=TE(table_id=l2)))
    assert not got.table_entry.HasField("counter_data")
    assert got.table_entry.controller_metadata == 77 and got.table_entry.metadata == b"\x00cookie"
    q = TE(table_id=l2)
    q.counter_data.SetInParent()
    (got,) = rig.read(E(table_entry=q))
    assert (got.table_entry.counter_data.byte_count, got.table_entry.counter_data.packet_count) == (100, 2)
    # MODIFY of the action without counter_data keeps the counter; metadata is replaced (full snapshot)
    m = l2_entry(rig, 1, 9)
    rig.write(upd(M, table_entry=m))
    (got,) = rig.read(E(table_entry=q))
    assert got.table_entry.counter_data.packet_count == 2
    assert got.table_entry.action.action.params[1].value == b"\x09"
    assert got.table_entry.controller_metadata == 0 and got.table_entry.metadata == b""
    # MODIFY with counter_data writes it
    m.counter_data.packet_count = 5
    rig.write(upd(M, table_entry=m))
    (got,) = rig.read(E(table_entry=q))
    assert (got.table_entry.counter_data.byte_count, got.table_entry.counter_data.packet_count) == (0, 5)
    # metadata filters of a wildcard read
    m2 = l2_entry(rig, 2, 1)
    m2.controller_metadata, m2.metadata = 5, b"x"
    rig.write(upd(I, table_entry=m2))
    assert len(rig.read(E(table_entry=TE(table_id=l2, controller_metadata=5)))) == 1
    assert len(rig.read(E(table_entry=TE(table_id=l2, metadata=b"y")))) == 0
    # the default entry: read with is_default_action; MODIFY sets it; MODIFY without an action resets it
    (d,) = rig.read(E(table_entry=TE(table_id=l2, is_default_action=True)))
    assert d.table_entry.is_default_action and d.table_entry.action.action.action_id
    initial = d.table_entry.action.action.action_id
    de = TE(table_id=l2, is_default_action=True, controller_metadata=3)
    de.action.action.action_id = rig.ids["MyIngress.l2_miss"]
    rig.write(upd(M, table_entry=de))
    (d,) = rig.read(E(table_entry=TE(table_id=l2, is_default_action=True)))
    assert d.table_entry.action.action.action_id == rig.ids["MyIngress.l2_miss"] and d.table_entry.controller_metadata == 3
    rig.write(upd(M, table_entry=TE(table_id=l2, is_default_action=True)))
    (d,) = rig.read(E(table_entry=TE(table_id=l2, is_default_action=True)))
    assert d.table_entry.action.action.action_id == initial and d.table_entry.controller_metadata == 0
    # INSERT/DELETE of the default entry, or one with a match: INVALID_ARGUMENT
    bad_match = TE(table_id=l2, is_default_action=True)
    bad_match.match.add(field_id=1).exact.value = b"\x01"
    assert batch_codes(rig, upd(I, table_entry=de), upd(D, table_entry=de), upd(M, table_entry=bad_match)) == \
        [code_pb2.INVALID_ARGUMENT] * 3
    assert rpc_code(lambda: rig.read(E(table_entry=bad_match))) == grpc.StatusCode.INVALID_ARGUMENT


def test_direct_meter_fields(rig):
    rig.stream()
    rig.set_pipeline()
    acl = rig.ids["MyIngress.acl"]  # ternary/range/optional key, a direct meter
    te = TE(table_id=acl, priority=10)
    te.match.add(field_id=1).ternary.CopyFrom(p4runtime_pb2.FieldMatch.Ternary(value=b"\x11", mask=b"\xff"))
    te.action.action.action_id = rig.ids["MyIngress.acl_permit"]
    te.meter_config.cir, te.meter_config.cburst, te.meter_config.pir, te.meter_config.pburst = 10, 20, 30, 40
    rig.write(upd(I, table_entry=te))
    q = TE(table_id=acl)
    q.meter_config.SetInParent()
    q.meter_counter_data.SetInParent()
    (got,) = rig.read(E(table_entry=q))
    assert got.table_entry.meter_config.pir == 30
    # meter_counter_data set in the request: all three colours are in the response
    mcd = got.table_entry.meter_counter_data
    assert mcd.HasField("green") and mcd.HasField("yellow") and mcd.HasField("red")
    (got,) = rig.read(E(table_entry=TE(table_id=acl)))
    assert not got.table_entry.HasField("meter_config") and not got.table_entry.HasField("meter_counter_data")
    # MODIFY without meter_config resets the meter to the default: read back unset
    m = TE(table_id=acl, priority=10, match=te.match)
    rig.write(upd(M, table_entry=m))
    (got,) = rig.read(E(table_entry=q))
    assert not got.table_entry.HasField("meter_config")
    # meter_counter_data may only be written as zeros
    m.meter_counter_data.green.packet_count = 1
    assert batch_codes(rig, upd(M, table_entry=m)) == [code_pb2.INVALID_ARGUMENT]


def test_priority_and_canonical_match_errors(rig):
    rig.stream()
    rig.set_pipeline()
    acl, route, l2 = rig.ids["MyIngress.acl"], rig.ids["MyIngress.route_v6"], rig.ids["MyIngress.l2"]

    def acl_entry(prio, value=b"\x11", mask=b"\xff"):
        t = TE(table_id=acl, priority=prio)
        t.match.add(field_id=1).ternary.CopyFrom(p4runtime_pb2.FieldMatch.Ternary(value=value, mask=mask))
        t.action.action.action_id = rig.ids["MyIngress.acl_permit"]
        return t

    def route_entry(value: bytes, plen: int):
        t = TE(table_id=route)
        t.match.add(field_id=1).lpm.CopyFrom(p4runtime_pb2.FieldMatch.LPM(value=value, prefix_len=plen))
        t.action.action.action_id = rig.ids["MyIngress.drop"]
        return t

    prio_exact = l2_entry(rig, 1, 1)
    prio_exact.priority = 5
    wide_key = l2_entry(rig, 3, 1)
    wide_key.match[0].exact.value = b"\x01" + bytes(6)  # 7 bytes, value over 48 bits
    empty_key = l2_entry(rig, 4, 1)
    empty_key.match[0].exact.value = b""
    codes = batch_codes(
        rig,
        upd(I, table_entry=prio_exact),  # priority on an exact table
        upd(I, table_entry=acl_entry(0)),  # no priority on a ternary table
        upd(I, table_entry=acl_entry(7, value=b"\x13", mask=b"\xf0")),  # value bits outside the mask
        upd(I, table_entry=route_entry(b"\x20\x01" + bytes(13) + b"\x01", 64)),  # bits past the prefix
        upd(I, table_entry=route_entry(b"\x20", 0)),  # prefix_len 0: omit the field instead
        upd(I, table_entry=wide_key),  # over-width bytestring
        upd(I, table_entry=empty_key),  # empty bytestring
        upd(I, table_entry=acl_entry(3)),  # fine
    )
    assert codes == [code_pb2.INVALID_ARGUMENT] * 5 + [code_pb2.OUT_OF_RANGE] * 2 + [code_pb2.OK]
    # padded and longer zero-extended forms are accepted; reads answer the canonical form
    padded = l2_entry(rig, 0x0A, 2)  # 6-byte padded key, 2-byte padded port
    padded.match[0].exact.value = bytes(8) + b"\x0a"
    rig.write(upd(I, table_entry=padded))
    (got,) = rig.read(E(table_entry=TE(table_id=l2)))
    assert got.table_entry.match[0].exact.value == b"\x0a"
    assert [p.value for p in got.table_entry.action.action.params] == [b"\x01", b"\x02"]
    assert rig.read(E(table_entry=TE(table_id=acl)))[0].table_entry.priority == 3


class IdleRig(Rig):
    """Rig whose pipeline is the compiled idle_timeout.p4: packets run through the real data plane."""

    def __init__(self) -> None:
        from softswitch.exec import build_pipeline
        from softswitch.frontend import load_program
        from softswitch.p4info import build_p4info
        from softswitch.runtime import SwitchState

        program = load_program(str(IDLE_P4), {}, [])
        self.loaded = []

        def loader(p4info, cfg):
            st = SwitchState(p4info)
            pl = build_pipeline(program, st, None)
            self.loaded.append(pl)
            return pl

        Rig.__init__(self)
        self.server._loader = loader
        self.p4info = build_p4info(program)
        self.ids = {o.preamble.name: o.preamble.id for kind in ("tables", "actions") for o in getattr(self.p4info, kind)}

    def mac_entry(self, mac: int, port: int, ttl_ns: int) -> TE:
        te = TE(table_id=self.ids["I.mac"], idle_timeout_ns=ttl_ns, controller_metadata=mac, metadata=b"m")
        te.match.add(field_id=1).exact.value = mac.to_bytes(6, "big")
        te.action.action.action_id = self.ids["I.fwd"]
        te.action.action.params.add(param_id=1, value=bytes([port]))
        return te

    def hit(self, mac: int) -> None:
        frame = mac.to_bytes(6, "big") + bytes(6) + b"\x08\x00" + bytes(32)
        self.loaded[-1].ingress(frame, 1, 0)


def test_idle_timeout_hits_and_notifications():
    rig = IdleRig()
    try:
        a = rig.stream()
        rig.set_pipeline()
        mac_t = rig.ids["I.mac"]
        ttl = 1_000_000_000
        rig.write(upd(I, table_entry=rig.mac_entry(0xA, 1, ttl)), upd(I, table_entry=rig.mac_entry(0xB, 2, 0)))
        # hits from the data plane keep the entry alive and time_since_last_hit small
        t_end = time.monotonic() + 1.5
        while time.monotonic() < t_end:
            rig.hit(0xA)
            last_hit_ns = time.time_ns()
            time.sleep(0.03)
        assert a.nothing("idle_timeout_notification", 0.01)
        q = TE(table_id=mac_t)
        q.time_since_last_hit.SetInParent()
        since = {e.table_entry.controller_metadata: e.table_entry.time_since_last_hit.elapsed_ns for e in rig.read(E(table_entry=q))}
        assert since[0xA] < 500_000_000 and since[0xB] >= 1_400_000_000  # B (TTL 0) is never hit but still timed
        # no longer hit: a notification after about the TTL, with key, metadata and TTL; never for TTL 0
        # (timed by the notifications' own timestamps, taken by the switch's scan, not by when they
        # reach this thread: a late delivery on a busy machine must not look like an early timer)
        n = a.recv("idle_timeout_notification", 5).idle_timeout_notification
        first = (n.timestamp - last_hit_ns) / 1e9
        assert 0.5 <= first <= 3, first
        assert len(n.table_entry) == 1
        e = n.table_entry[0]
        assert (e.table_id, e.match[0].exact.value, e.priority) == (mac_t, b"\x0a", 0)
        assert (e.controller_metadata, e.metadata, e.idle_timeout_ns) == (0xA, b"m", ttl)
        # the timer restarts: another notification after another TTL, not at once
        n2 = a.recv("idle_timeout_notification", 5).idle_timeout_notification
        assert n2.timestamp - n.timestamp >= 0.8e9, (n.timestamp, n2.timestamp)
        # not reported to a backup
        b = rig.stream((0, 0))
        assert b.nothing("idle_timeout_notification", 1.2)
    finally:
        rig.close()


def test_idle_scan_takes_no_lock_while_nothing_is_due():
    """The idle timer's scan does not wait for the server lock (held by a long Write or Read)
    when no entry can have expired yet: it reads the next deadline and returns."""
    import threading

    rig = IdleRig()
    try:
        rig.stream()
        rig.set_pipeline()
        rig.write(upd(I, table_entry=rig.mac_entry(0xA, 1, 60 * 10**9)))
        sent: list[int] = []
        th = threading.Thread(target=lambda: sent.append(rig.server.scan_idle_timeouts()), daemon=True)
        with rig.server._lock:
            th.start()
            th.join(10)
            assert not th.is_alive() and sent == [0]
        th.join()
    finally:
        rig.close()


def test_idle_timeout_errors(rig):
    rig.stream()
    rig.set_pipeline()
    l2 = rig.ids["MyIngress.l2"]  # no idle_timeout_behavior
    te = l2_entry(rig, 1, 1)
    te.idle_timeout_ns = 1_000_000
    de = TE(table_id=l2, is_default_action=True, idle_timeout_ns=5)
    assert batch_codes(rig, upd(I, table_entry=te), upd(M, table_entry=de)) == [code_pb2.INVALID_ARGUMENT] * 2
    # a DELETE considers the key only
    rig.write(upd(I, table_entry=l2_entry(rig, 1, 1)))
    rig.write(upd(D, table_entry=te))
    q = TE(table_id=l2)
    q.time_since_last_hit.SetInParent()
    assert rpc_code(lambda: rig.read(E(table_entry=q))) == grpc.StatusCode.INVALID_ARGUMENT
    w = l2_entry(rig, 2, 1)
    w.time_since_last_hit.SetInParent()  # must be unset in writes
    assert batch_codes(rig, upd(I, table_entry=w)) == [code_pb2.INVALID_ARGUMENT]
    # a wildcard read over all tables asks it only of the tables that support it (none here)
    allq = TE()
    allq.time_since_last_hit.SetInParent()
    assert rig.read(E(table_entry=allq)) == []


# ---- digests ------------------------------------------------------------------------------------
def _digest_rig(rig):
    a = rig.stream()
    rig.set_pipeline()
    return a, rig.ids["learn_t"], rig.server.state


def _cfg(did, timeout_ns, size, ack_ns):
    return p4runtime_pb2.DigestEntry(digest_id=did, config=p4runtime_pb2.DigestEntry.Config(
        max_timeout_ns=timeout_ns, max_list_size=size, ack_timeout_ns=ack_ns))


def test_digest_entry_config_and_batching(rig):
    a, did, st = _digest_rig(rig)
    assert rig.read(E(digest_entry=p4runtime_pb2.DigestEntry())) == []
    assert batch_codes(rig, upd(M, digest_entry=_cfg(did, 1, 1, 1)), upd(D, digest_entry=_cfg(did, 1, 1, 1)),
                       upd(I, digest_entry=p4runtime_pb2.DigestEntry(digest_id=did))) == \
        [code_pb2.NOT_FOUND, code_pb2.NOT_FOUND, code_pb2.INVALID_ARGUMENT]
    # by size: 3 distinct tuples make one list; a duplicate in the buffer is not added
    rig.write(upd(I, digest_entry=_cfg(did, 60_000_000_000, 3, 60_000_000_000)))
    assert batch_codes(rig, upd(I, digest_entry=_cfg(did, 1, 1, 1))) == [code_pb2.ALREADY_EXISTS]
    (got,) = rig.read(E(digest_entry=p4runtime_pb2.DigestEntry(digest_id=did)))
    assert got.digest_entry.config.max_list_size == 3
    for v in (1, 2, 2):
        st.digests.emit(did, (v, 1))
    assert a.nothing("digest", 0.3)
    st.digests.emit(did, (3, 1))
    lst = a.recv("digest").digest
    assert len(lst.data) == 3
    # MODIFY: max_list_size 0 is no size limit, the list goes at max_timeout_ns
    rig.write(upd(M, digest_entry=_cfg(did, 300_000_000, 0, 0)))
    t0 = time.monotonic()
    for v in range(10, 20):
        st.digests.emit(did, (v, 1))
    lst = a.recv("digest", 3).digest
    assert len(lst.data) == 10 and time.monotonic() - t0 >= 0.25
    # ack_timeout 0: nothing is cached, the same tuple is reported again at once
    st.digests.emit(did, (10, 1))
    assert len(a.recv("digest", 3).digest.data) == 1
    # DELETE: nothing is sent any more, the read is empty
    rig.write(upd(D, digest_entry=p4runtime_pb2.DigestEntry(digest_id=did)))
    st.digests.emit(did, (99, 1))
    assert a.nothing("digest", 0.4) and rig.read(E(digest_entry=p4runtime_pb2.DigestEntry())) == []


def test_digest_ack_semantics(rig):
    a, did, st = _digest_rig(rig)
    rig.write(upd(I, digest_entry=_cfg(did, 0, 1, 400_000_000)))
    st.digests.emit(did, (7, 7))
    first = a.recv("digest").digest
    # not acked: suppressed until ack_timeout_ns, then reported again
    st.digests.emit(did, (7, 7))
    assert a.nothing("digest", 0.2)
    time.sleep(0.3)
    st.digests.emit(did, (7, 7))
    second = a.recv("digest").digest
    assert second.list_id != first.list_id
    # acked: reported again at once
    ack = p4runtime_pb2.StreamMessageRequest()
    ack.digest_ack.digest_id, ack.digest_ack.list_id = did, second.list_id
    a.send(ack)
    deadline = time.monotonic() + 3
    while True:
        st.digests.emit(did, (7, 7))
        try:
            a.recv("digest", 0.05)
            break
        except TimeoutError:
            assert time.monotonic() < deadline, "not reported again after its ack"
    # an ack naming a digest not in the P4Info: StreamError INVALID_ARGUMENT with the ack
    bad = p4runtime_pb2.StreamMessageRequest()
    bad.digest_ack.digest_id, bad.digest_ack.list_id = 12345, 1
    a.send(bad)
    err = a.recv("error").error
    assert err.canonical_code == code_pb2.INVALID_ARGUMENT and err.digest_list_ack.digest_list_ack.digest_id == 12345


# ---- arbitration and roles ----------------------------------------------------------------------
def test_election_ids_are_uint128_and_primary_loss(rig):
    lo = rig.stream((0, 2**64 - 1))
    assert lo.first.arbitration.status.code == code_pb2.OK
    rig.set_pipeline(election_id=(0, 2**64 - 1))
    hi = rig.stream((1, 0))  # high word 1 > any low word
    assert hi.first.arbitration.status.code == code_pb2.OK and hi.first.arbitration.election_id == eid(1, 0)
    n = lo.recv("arbitration").arbitration
    assert n.status.code == code_pb2.ALREADY_EXISTS and n.election_id == eid(1, 0)
    assert rpc_code(lambda: rig.write(upd(I, table_entry=l2_entry(rig, 1, 1)), election_id=(0, 2**64 - 1))) == \
        grpc.StatusCode.PERMISSION_DENIED
    assert rpc_code(lambda: rig.set_pipeline(election_id=(0, 2**64 - 1))) == grpc.StatusCode.PERMISSION_DENIED
    rig.write(upd(I, table_entry=l2_entry(rig, 1, 1)), election_id=(1, 0))
    # a stream with no election id is a backup for good
    none = rig.stream(None, wait=False)
    none.arbitrate(None)
    assert none.recv("arbitration").arbitration.status.code == code_pb2.ALREADY_EXISTS
    # the primary leaves: everyone is told there is no primary (election id: the highest seen)
    hi.close()
    for s in (lo, none):
        n = s.recv("arbitration").arbitration
        assert n.status.code == code_pb2.NOT_FOUND and n.election_id == eid(1, 0)
    # nobody is promoted: the old backup's id is still lower than the highest seen
    assert rpc_code(lambda: rig.write(upd(I, table_entry=l2_entry(rig, 2, 1)), election_id=(0, 2**64 - 1))) == \
        grpc.StatusCode.PERMISSION_DENIED
    lo.arbitrate((0, 2**64 - 1))
    assert lo.recv("arbitration").arbitration.status.code == code_pb2.NOT_FOUND
    assert none.nothing("arbitration")  # a backup staying backup: only it is told
    # a new MasterArbitrationUpdate with an id >= the highest makes it primary; all are told
    lo.arbitrate((1, 0))
    assert lo.recv("arbitration").arbitration.status.code == code_pb2.OK
    assert none.recv("arbitration").arbitration.status.code == code_pb2.ALREADY_EXISTS
    rig.write(upd(I, table_entry=l2_entry(rig, 2, 1)), election_id=(1, 0))
    # the same election id from a second stream ends that stream with INVALID_ARGUMENT
    dup = rig.stream((1, 0), wait=False)
    assert dup.ended.wait(5) and dup.error.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_roles(rig):
    rig.stream()
    rig.set_pipeline()

    def arb_stream(name="", config=False):
        s = StreamClient(rig.stub)
        rig.streams.append(s)
        req = p4runtime_pb2.StreamMessageRequest()
        req.arbitration.device_id = DEV
        req.arbitration.election_id.CopyFrom(eid(0, 9))
        req.arbitration.role.name = name
        if config:
            req.arbitration.role.config.Pack(p4runtime_pb2.Uint128(low=1))
        s.send(req)
        return s

    # a role.config: no role scheme is agreed with this server -> INVALID_ARGUMENT
    s = arb_stream("", config=True)
    assert s.ended.wait(5) and s.error.code() == grpc.StatusCode.INVALID_ARGUMENT
    s = arb_stream("sdn")
    assert s.ended.wait(5) and s.error.code() == grpc.StatusCode.UNIMPLEMENTED
    # a live default-role stream cannot switch role
    d = rig.stream((0, 3))
    req = p4runtime_pb2.StreamMessageRequest()
    req.arbitration.device_id = DEV
    req.arbitration.role.name = "sdn"
    d.send(req)
    assert d.ended.wait(5) and d.error.code() == grpc.StatusCode.FAILED_PRECONDITION
    # Write / SetForwardingPipelineConfig naming a role that does not exist: NOT_FOUND
    assert rpc_code(lambda: rig.write(upd(I, table_entry=l2_entry(rig, 1, 1)), role="sdn")) == grpc.StatusCode.NOT_FOUND
    req = SFPC(device_id=DEV, role="sdn", action=SFPC.VERIFY, election_id=eid(0, 1))
    req.config.p4info.CopyFrom(rig.p4info)
    assert rpc_code(lambda: rig.stub.SetForwardingPipelineConfig(req)) == grpc.StatusCode.NOT_FOUND
    # a Read "only returns entries for the given role" (p4runtime.proto): one that does not exist is
    # NOT_FOUND too, not every entry of the default role
    ent = p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry())
    assert rpc_code(lambda: list(rig.stub.Read(p4runtime_pb2.ReadRequest(device_id=DEV, role="sdn",
                                                                         entities=[ent])))) == grpc.StatusCode.NOT_FOUND
    list(rig.stub.Read(p4runtime_pb2.ReadRequest(device_id=DEV, entities=[ent])))  # the default role reads


# ---- pipeline config ----------------------------------------------------------------------------
def test_pipeline_actions_and_reconcile(rig):
    rig.stream()
    assert rpc_code(lambda: rig.stub.SetForwardingPipelineConfig(
        SFPC(device_id=DEV, action=SFPC.VERIFY, election_id=eid(0, 1)))) == grpc.StatusCode.INVALID_ARGUMENT
    assert rpc_code(lambda: rig.stub.SetForwardingPipelineConfig(
        SFPC(device_id=DEV, action=SFPC.UNSPECIFIED, election_id=eid(0, 1)))) == grpc.StatusCode.INVALID_ARGUMENT
    rig.set_pipeline(cookie=1)
    te = l2_entry(rig, 1, 4)
    te.counter_data.packet_count = 9
    rig.write(upd(I, table_entry=te))
    # VERIFY_AND_SAVE does not change what runs; Get answers the saved config, the one Reads and Writes
    # now refer to (as bmv2's PI server; it answered the running one until 2026-12-05)
    running = rig.server.state
    rig.set_pipeline(SFPC.VERIFY_AND_SAVE, cookie=2)
    G = p4runtime_pb2.GetForwardingPipelineConfigRequest
    assert rig.stub.GetForwardingPipelineConfig(G(device_id=DEV, response_type=G.COOKIE_ONLY)).config.cookie.cookie == 2
    assert rig.server.state is running
    # RECONCILE_AND_COMMIT keeps entries and their direct counters
    rig.set_pipeline(SFPC.RECONCILE_AND_COMMIT, cookie=3)
    q = TE()
    q.counter_data.SetInParent()
    (got,) = rig.read(E(table_entry=q))
    assert got.table_entry.counter_data.packet_count == 9
    # ... and when the new config cannot hold the state: INVALID_ARGUMENT, the old pipeline stays
    smaller = p4info_pb2.P4Info()  # the same program without table l2 (and its direct counter)
    smaller.CopyFrom(rig.p4info)
    keep = [t for t in smaller.tables if t.preamble.name != "MyIngress.l2"]
    del smaller.tables[:]
    smaller.tables.extend(keep)
    del smaller.direct_counters[:]
    before = rig.server.pipeline
    assert rpc_code(lambda: rig.set_pipeline(SFPC.RECONCILE_AND_COMMIT, p4info=smaller)) == \
        grpc.StatusCode.INVALID_ARGUMENT
    assert rig.server.pipeline is before and len(rig.read(E(table_entry=TE()))) == 1
    cfg = rig.stub.GetForwardingPipelineConfig(G(device_id=DEV)).config
    assert cfg.cookie.cookie == 3 and cfg.p4_device_config == b"devconfig" and cfg.HasField("p4info")
    version = rig.stub.Capabilities(p4runtime_pb2.CapabilitiesRequest()).p4runtime_api_version
    assert version.count(".") == 2 and version.startswith("1.")


def test_verify_and_save_then_commit(rig):
    """After VERIFY_AND_SAVE, Writes and Reads refer to the saved config; the running pipeline is
    untouched until COMMIT realizes the saved config with those writes."""
    rig.stream()
    rig.set_pipeline()
    rig.write(upd(I, table_entry=l2_entry(rig, 1, 1)))
    running = rig.server.state
    no_l2 = p4info_pb2.P4Info()
    no_l2.CopyFrom(rig.p4info)
    keep = [t for t in no_l2.tables if t.preamble.name != "MyIngress.l2"]
    del no_l2.tables[:]
    no_l2.tables.extend(keep)
    del no_l2.direct_counters[:]
    rig.set_pipeline(SFPC.VERIFY_AND_SAVE, p4info=no_l2)
    assert batch_codes(rig, upd(I, table_entry=l2_entry(rig, 2, 1))) == [code_pb2.NOT_FOUND]
    assert rpc_code(lambda: rig.read(E(table_entry=TE(table_id=rig.ids["MyIngress.l2"])))) == grpc.StatusCode.NOT_FOUND
    acl = TE(table_id=rig.ids["MyIngress.acl"], priority=1)
    acl.match.add(field_id=1).ternary.CopyFrom(p4runtime_pb2.FieldMatch.Ternary(value=b"\x06", mask=b"\xff"))
    acl.action.action.action_id = rig.ids["MyIngress.acl_permit"]
    rig.write(upd(I, table_entry=acl))
    assert rig.server.state is running and len(running.table("MyIngress.acl")) == 0
    assert len(running.table("MyIngress.l2")) == 1
    rig.stub.SetForwardingPipelineConfig(SFPC(device_id=DEV, action=SFPC.COMMIT, election_id=eid(0, 1)))
    assert rig.server.state is not running and len(rig.server.state.table("MyIngress.acl")) == 1
    assert [e.table_entry.table_id for e in rig.read(E(table_entry=TE()))] == [rig.ids["MyIngress.acl"]]


# ---- packet out ---------------------------------------------------------------------------------
def test_packet_out_errors_and_header_padding(rig):
    # a PacketOut before arbitration is not from the primary: dropped with a StreamError, the stream lives
    early = rig.stream(None)
    po = p4runtime_pb2.StreamMessageRequest()
    po.packet.payload = b"early"
    po.packet.metadata.add(metadata_id=1, value=b"\x01")
    early.send(po)
    err = early.recv("error").error
    assert err.canonical_code == code_pb2.PERMISSION_DENIED and err.packet_out.packet_out.payload == b"early"
    early.arbitrate((0, 1))
    assert early.recv("arbitration").arbitration.status.code == code_pb2.OK
    rig.set_pipeline()
    assert rig.packet_outs.empty()

    def send(*meta, payload=b"p"):
        m = p4runtime_pb2.StreamMessageRequest()
        m.packet.payload = payload
        for mid, v in meta:
            m.packet.metadata.add(metadata_id=mid, value=v)
        early.send(m)

    for meta in [((9, b"\x01"),), ((1, b"\x01"), (1, b"\x02")), ((1, b"\x02\x00"),), ((1, b""),), ((2, b"\x80"),)]:
        send(*meta)  # unknown id, given twice, over-width (9 and 7 bits), empty
        assert early.recv("error").error.canonical_code == code_pb2.INVALID_ARGUMENT
    assert rig.packet_outs.empty()
    # packed MSB first, zero-padded to whole bytes; padded forms accepted
    send((1, b"\x00\x00\x01\xff"), (2, b"\x7f"))
    assert rig.packet_outs.get(timeout=5) == ((0x1FF << 7) | 0x7F).to_bytes(2, "big") + b"p"


def test_messages_before_arbitration_keep_the_stream_and_errors_name_their_message(rig):
    """A digest ack, an `other` extension or an empty message sent before the stream's arbitration
    ended the stream with FAILED_PRECONDITION (bmv2's PI server drops them and keeps the stream; a
    PacketOut got a StreamError and kept it).  Now the stream stays: the ack is ignored as a backup's,
    the other two get a StreamError UNIMPLEMENTED whose ``details`` (the spec asks for them) say it
    answers an `other` message, carrying it back."""
    from google.protobuf import any_pb2

    early = rig.stream(None)
    ack = p4runtime_pb2.StreamMessageRequest()
    ack.digest_ack.digest_id, ack.digest_ack.list_id = rig.p4info.digests[0].preamble.id, 1
    early.send(ack)
    ext = p4runtime_pb2.StreamMessageRequest()
    ext.other.CopyFrom(any_pb2.Any(type_url="type.example/x", value=b"\x01"))
    early.send(ext)
    err = early.recv("error").error
    assert err.canonical_code == code_pb2.UNIMPLEMENTED and err.WhichOneof("details") == "other"
    assert err.other.other.type_url == "type.example/x"
    early.send(p4runtime_pb2.StreamMessageRequest())
    err = early.recv("error").error
    assert err.canonical_code == code_pb2.UNIMPLEMENTED and err.WhichOneof("details") == "other"
    early.arbitrate((0, 1))
    assert early.recv("arbitration").arbitration.status.code == code_pb2.OK


def test_clone_session_statuses_are_bmv2s(rig):
    """As bmv2's P4Runtime server (p4lang/PI proto/frontend/src/pre_clone_mgr.cpp,
    PreCloneMgr::session_read/session_delete/session_create; device_mgr.cpp's Write packs each
    failed update's code into an UNKNOWN status): a Read of one clone session that does not exist
    ends with NOT_FOUND; a DELETE of one is a failed update NOT_FOUND, an INSERT of an existing
    one ALREADY_EXISTS; a MODIFY of a missing one NOT_FOUND."""
    rig.stream()
    rig.set_pipeline()

    def cs(sid: int) -> E:
        ent = E()
        c = ent.packet_replication_engine_entry.clone_session_entry
        c.session_id = sid
        c.replicas.add(egress_port=3, instance=1)
        return ent

    def probe(sid: int) -> E:
        ent = E()
        ent.packet_replication_engine_entry.clone_session_entry.session_id = sid
        return ent

    assert rpc_code(lambda: rig.read(probe(7))) == grpc.StatusCode.NOT_FOUND
    assert batch_codes(rig, upd(D, **_pre(cs(7)))) == [code_pb2.NOT_FOUND]
    assert batch_codes(rig, upd(M, **_pre(cs(7)))) == [code_pb2.NOT_FOUND]
    rig.write(upd(I, **_pre(cs(7))))
    assert batch_codes(rig, upd(I, **_pre(cs(7)))) == [code_pb2.ALREADY_EXISTS]
    (got,) = rig.read(probe(7))
    assert got.packet_replication_engine_entry.clone_session_entry == cs(7).packet_replication_engine_entry.clone_session_entry
    rig.write(upd(D, **_pre(cs(7))))
    assert rpc_code(lambda: rig.read(probe(7))) == grpc.StatusCode.NOT_FOUND
    assert rig.read(probe(0)) == []  # a wildcard read of none is no error


def _pre(ent: E) -> dict:
    return {"packet_replication_engine_entry": ent.packet_replication_engine_entry}


def test_pre_id_limits_and_class_of_service_are_bmv2s(rig):
    """bmv2's PI server (p4lang/PI device_mgr.cpp pre_mc_write/pre_mc_read/pre_clone_write,
    pre_clone_mgr.cpp validate_session_id/session_set, pre_mc_mgr.h first_reserved_group_id):
    clone session ids and multicast group ids are 1..32767. A clone session id past that is a
    failed update INVALID_ARGUMENT (checked before presence), a group id OUT_OF_RANGE (on reads
    too, as the Read's status); a class_of_service other than 0 is UNIMPLEMENTED, and a MODIFY
    carrying one has already replaced the replicas when it fails."""
    rig.stream()
    rig.set_pipeline()

    def cs(sid: int, cos: int = 0, port: int = 3) -> dict:
        c = p4runtime_pb2.CloneSessionEntry(session_id=sid, class_of_service=cos)
        c.replicas.add(egress_port=port, instance=1)
        return {"packet_replication_engine_entry": p4runtime_pb2.PacketReplicationEngineEntry(
            clone_session_entry=c)}

    def mg(gid: int) -> dict:
        g = p4runtime_pb2.MulticastGroupEntry(multicast_group_id=gid)
        g.replicas.add(egress_port=2, instance=1)
        return {"packet_replication_engine_entry": p4runtime_pb2.PacketReplicationEngineEntry(
            multicast_group_entry=g)}

    rig.write(upd(I, **cs(32767)), upd(I, **mg(32767)))
    # one batch, one p4.v1.Error per update, in order
    assert batch_codes(rig, upd(I, **cs(32768)), upd(D, **cs(40000)), upd(M, **cs(1 << 20)),
                       upd(I, **mg(32768)), upd(D, **mg(65535)), upd(I, **cs(5, cos=1)),
                       upd(I, **cs(32767, cos=2))) == [
        code_pb2.INVALID_ARGUMENT, code_pb2.INVALID_ARGUMENT, code_pb2.INVALID_ARGUMENT,
        code_pb2.OUT_OF_RANGE, code_pb2.OUT_OF_RANGE, code_pb2.UNIMPLEMENTED, code_pb2.ALREADY_EXISTS]

    def probe(**kw) -> E:
        return E(packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry(**kw))

    assert rpc_code(lambda: rig.read(probe(multicast_group_entry=p4runtime_pb2.MulticastGroupEntry(
        multicast_group_id=32768)))) == grpc.StatusCode.OUT_OF_RANGE
    assert rpc_code(lambda: rig.read(probe(clone_session_entry=p4runtime_pb2.CloneSessionEntry(
        session_id=5)))) == grpc.StatusCode.NOT_FOUND  # the UNIMPLEMENTED insert left nothing
    assert batch_codes(rig, upd(M, **cs(32767, cos=4, port=9))) == [code_pb2.UNIMPLEMENTED]
    (got,) = rig.read(probe(clone_session_entry=p4runtime_pb2.CloneSessionEntry(session_id=32767)))
    c = got.packet_replication_engine_entry.clone_session_entry
    assert (c.class_of_service, [(r.egress_port, r.instance) for r in c.replicas]) == (0, [(9, 1)])
    rig.write(upd(D, **cs(32767, cos=6)), upd(D, **mg(32767)))  # DELETE does not look at the class
    assert rig.read(probe(clone_session_entry=p4runtime_pb2.CloneSessionEntry())) == []
