"""P4Runtime server over real gRPC on loopback: pipeline config, writes, reads, errors,
mastership, packet I/O and digests."""
from __future__ import annotations

import queue

import grpc
import pytest
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc
from p4rt_helpers import StreamClient, eid, load_p4info, write_errors

from softswitch.p4rt import P4RuntimeServer
from softswitch.runtime import SwitchState

DEV = 1
SFPC = p4runtime_pb2.SetForwardingPipelineConfigRequest


class Rig:
    def __init__(self) -> None:
        self.packet_outs: queue.Queue = queue.Queue()
        self.commits: list = []
        self.server = P4RuntimeServer(DEV, lambda p4info, cfg: SwitchState(p4info), self.packet_outs.put,
                                      "127.0.0.1:0", on_commit=self.commits.append)
        port = self.server.start()
        self.channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self.streams: list[StreamClient] = []
        self.p4info = load_p4info()
        self.ids = {o.preamble.name: o.preamble.id for kind in ("tables", "actions", "counters", "registers",
                                                                  "digests", "action_profiles", "meters")
                    for o in getattr(self.p4info, kind)}

    def stream(self, election_id=(0, 1), wait=True) -> StreamClient:
        """A new stream; with ``wait`` its first arbitration answer is in ``.first``."""
        s = StreamClient(self.stub)
        self.streams.append(s)
        if election_id is not None:
            s.arbitrate(election_id)
            if wait:
                s.first = s.recv("arbitration")
        return s

    def set_pipeline(self, action=SFPC.VERIFY_AND_COMMIT, election_id=(0, 1), p4info=None, cookie=None):
        req = SFPC(device_id=DEV, action=action, election_id=eid(*election_id))
        req.config.p4info.CopyFrom(p4info or self.p4info)
        req.config.p4_device_config = b"devconfig"
        if cookie is not None:
            req.config.cookie.cookie = cookie
        return self.stub.SetForwardingPipelineConfig(req)

    def write(self, *updates, election_id=(0, 1), **kw):
        req = p4runtime_pb2.WriteRequest(device_id=DEV, election_id=eid(*election_id), updates=updates, **kw)
        return self.stub.Write(req)

    def read(self, *entities):
        out = []
        for resp in self.stub.Read(p4runtime_pb2.ReadRequest(device_id=DEV, entities=entities)):
            out.extend(resp.entities)
        return out

    def close(self) -> None:
        for s in self.streams:
            s.close()
        self.channel.close()
        self.server.stop()


def l2_entry(rig, mac: int, port: int) -> p4runtime_pb2.TableEntry:
    te = p4runtime_pb2.TableEntry(table_id=rig.ids["MyIngress.l2"])
    te.match.add(field_id=1).exact.value = mac.to_bytes(6, "big")
    a = te.action.action
    a.action_id = rig.ids["MyIngress.set_port"]
    a.params.add(param_id=1, value=b"\x00\x00\x00\x00\x00\x01")
    a.params.add(param_id=2, value=port.to_bytes(2, "big"))
    return te


def upd(utype, **ent):
    return p4runtime_pb2.Update(type=utype, entity=p4runtime_pb2.Entity(**ent))


def test_capabilities(rig):
    assert rig.stub.Capabilities(p4runtime_pb2.CapabilitiesRequest()).p4runtime_api_version == "1.4.1"


def test_pipeline_config_and_no_pipeline_errors(rig):
    s = rig.stream()
    assert s.first.arbitration.status.code == code_pb2.OK
    with pytest.raises(grpc.RpcError) as ei:
        rig.write(upd(p4runtime_pb2.Update.INSERT, table_entry=l2_entry(rig, 1, 1)))
    assert ei.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    with pytest.raises(grpc.RpcError) as ei:  # no pipeline comes first, whatever the atomicity (as PI)
        rig.write(upd(p4runtime_pb2.Update.INSERT, table_entry=l2_entry(rig, 1, 1)),
                  atomicity=p4runtime_pb2.WriteRequest.ROLLBACK_ON_ERROR)
    assert ei.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    with pytest.raises(grpc.RpcError) as ei:
        rig.read(p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry()))
    assert ei.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    # no config yet: Get answers OK with the config unset (spec "GetForwardingPipelineConfig RPC")
    got = rig.stub.GetForwardingPipelineConfig(p4runtime_pb2.GetForwardingPipelineConfigRequest(device_id=DEV))
    assert not got.HasField("config")
    # a backup (wrong election id) may not set the pipeline
    with pytest.raises(grpc.RpcError) as ei:
        rig.set_pipeline(election_id=(0, 7))
    assert ei.value.code() == grpc.StatusCode.PERMISSION_DENIED
    # VERIFY does not commit; COMMIT without a saved config fails
    rig.set_pipeline(SFPC.VERIFY)
    assert rig.server.state is None and rig.commits == []
    commit = SFPC(device_id=DEV, action=SFPC.COMMIT, election_id=eid(0, 1))
    with pytest.raises(grpc.RpcError) as ei:
        rig.stub.SetForwardingPipelineConfig(commit)
    assert ei.value.code() == grpc.StatusCode.NOT_FOUND  # the spec: no saved config
    rig.set_pipeline(SFPC.VERIFY_AND_SAVE, cookie=42)
    assert rig.server.state is None
    with pytest.raises(grpc.RpcError) as ei:
        rig.set_pipeline(SFPC.COMMIT)  # COMMIT with a config
    assert ei.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert rig.server.state is None
    rig.stub.SetForwardingPipelineConfig(commit)
    assert isinstance(rig.server.state, SwitchState) and len(rig.commits) == 1
    G = p4runtime_pb2.GetForwardingPipelineConfigRequest
    get = lambda rt: rig.stub.GetForwardingPipelineConfig(G(device_id=DEV, response_type=rt)).config
    cfg = get(G.ALL)
    assert cfg.p4info == rig.p4info and cfg.p4_device_config == b"devconfig" and cfg.cookie.cookie == 42
    cfg = get(G.COOKIE_ONLY)
    assert not cfg.HasField("p4info") and not cfg.p4_device_config and cfg.cookie.cookie == 42
    cfg = get(G.P4INFO_AND_COOKIE)
    assert cfg.HasField("p4info") and not cfg.p4_device_config
    cfg = get(G.DEVICE_CONFIG_AND_COOKIE)
    assert not cfg.HasField("p4info") and cfg.p4_device_config == b"devconfig"
    with pytest.raises(grpc.RpcError) as ei:  # a response_type outside the enum (bmv2's PI: the same)
        get(7)
    assert ei.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    # a P4Info the loader rejects -> INVALID_ARGUMENT, the running pipeline stays
    bad = load_p4info()
    bad.tables[0].action_refs.add(id=999)
    with pytest.raises(grpc.RpcError) as ei:
        rig.set_pipeline(p4info=bad)
    assert ei.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert len(rig.commits) == 1
    # wrong device id
    with pytest.raises(grpc.RpcError) as ei:
        rig.stub.GetForwardingPipelineConfig(G(device_id=9))
    assert ei.value.code() == grpc.StatusCode.NOT_FOUND
    # a running pipeline without a cookie: COOKIE_ONLY still answers a config (set, with no cookie);
    # an unset config says no pipeline is known (the spec), which it answered until 2026-12-05
    rig.set_pipeline()
    resp = rig.stub.GetForwardingPipelineConfig(G(device_id=DEV, response_type=G.COOKIE_ONLY))
    assert resp.HasField("config") and not resp.config.HasField("cookie")
    # after VERIFY_AND_SAVE, Get answers the saved config, the one Reads and Writes now refer to
    saved = load_p4info()
    del saved.tables[-1]
    rig.set_pipeline(SFPC.VERIFY_AND_SAVE, p4info=saved, cookie=43)
    cfg = get(G.ALL)
    assert cfg.p4info == saved and cfg.cookie.cookie == 43
    rig.stub.SetForwardingPipelineConfig(commit)
    assert get(G.ALL).p4info == saved
    # a P4Info pushed without a device config runs the running program again with it (as bmv2's PI
    # server keeps its JSON); it was INVALID_ARGUMENT for the empty device config
    only = SFPC(device_id=DEV, action=SFPC.VERIFY_AND_COMMIT, election_id=eid(0, 1))
    only.config.p4info.CopyFrom(rig.p4info)
    n = len(rig.commits)
    rig.stub.SetForwardingPipelineConfig(only)
    assert len(rig.commits) == n + 1
    cfg = get(G.ALL)
    assert cfg.p4info == rig.p4info and cfg.p4_device_config == b"devconfig"


def test_write_batch_errors_and_reads(rig):
    rig.stream()
    rig.set_pipeline()
    I, M, D = p4runtime_pb2.Update.INSERT, p4runtime_pb2.Update.MODIFY, p4runtime_pb2.Update.DELETE
    rig.write(upd(I, table_entry=l2_entry(rig, 1, 1)))
    bad_port = l2_entry(rig, 3, 1)
    bad_port.action.action.params[1].value = b"\x02\x00"  # 512 does not fit bit<9>
    with pytest.raises(grpc.RpcError) as ei:
        rig.write(upd(I, table_entry=l2_entry(rig, 2, 2)),
                  upd(I, table_entry=l2_entry(rig, 1, 1)),
                  upd(I, table_entry=bad_port),
                  upd(D, table_entry=l2_entry(rig, 9, 1)))
    assert ei.value.code() == grpc.StatusCode.UNKNOWN
    codes = [c for c, _ in write_errors(ei.value)]
    assert codes == [code_pb2.OK, code_pb2.ALREADY_EXISTS, code_pb2.OUT_OF_RANGE, code_pb2.NOT_FOUND]
    # CONTINUE_ON_ERROR: the good update went in
    got = rig.read(p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(table_id=rig.ids["MyIngress.l2"])))
    assert sorted(int.from_bytes(e.table_entry.match[0].exact.value, "big") for e in got) == [1, 2]
    rig.write(upd(M, table_entry=l2_entry(rig, 2, 5)))
    st = rig.server.state
    assert st.table("MyIngress.l2").lookup((2,))[1] == (1, 5)
    # other atomicity modes are not implemented
    with pytest.raises(grpc.RpcError) as ei:
        rig.write(upd(I, table_entry=l2_entry(rig, 7, 1)), atomicity=p4runtime_pb2.WriteRequest.ROLLBACK_ON_ERROR)
    assert ei.value.code() == grpc.StatusCode.UNIMPLEMENTED
    # table full -> RESOURCE_EXHAUSTED per update (nexthop has size 1024; use a profile of size 128)
    prof = rig.ids["MyIngress.nexthop_profile"]
    ups = [upd(I, action_profile_member=p4runtime_pb2.ActionProfileMember(
        action_profile_id=prof, member_id=i + 1, action=p4runtime_pb2.Action(
            action_id=rig.ids["MyIngress.ingress.nexthop"], params=[p4runtime_pb2.Action.Param(param_id=1, value=b"\x01")])))
        for i in range(129)]
    with pytest.raises(grpc.RpcError) as ei:
        rig.write(*ups)
    codes = [c for c, _ in write_errors(ei.value)]
    assert codes[:128] == [code_pb2.OK] * 128 and codes[128] == code_pb2.RESOURCE_EXHAUSTED
    # wildcard reads of several kinds in one request
    st.counter("MyIngress.port_rx").count(1, 60)
    ents = rig.read(p4runtime_pb2.Entity(counter_entry=p4runtime_pb2.CounterEntry(counter_id=rig.ids["MyIngress.port_rx"])),
                    p4runtime_pb2.Entity(action_profile_member=p4runtime_pb2.ActionProfileMember()),
                    p4runtime_pb2.Entity(register_entry=p4runtime_pb2.RegisterEntry(register_id=rig.ids["MyIngress.flow_state"])))
    kinds = [e.WhichOneof("entity") for e in ents]
    assert kinds.count("counter_entry") == 512 and kinds.count("action_profile_member") == 128
    assert kinds.count("register_entry") == 1024
    assert ents[1].counter_entry.data.byte_count == 60
    with pytest.raises(grpc.RpcError) as ei:
        rig.read(p4runtime_pb2.Entity(counter_entry=p4runtime_pb2.CounterEntry(counter_id=12345)))
    assert ei.value.code() == grpc.StatusCode.NOT_FOUND
    # a batch whose second request fails: what the first read comes before the error, as from PI
    # (it was dropped with the error until 2026-12-05)
    got = []
    with pytest.raises(grpc.RpcError) as ei:
        for resp in rig.stub.Read(p4runtime_pb2.ReadRequest(device_id=DEV, entities=[
                p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(table_id=rig.ids["MyIngress.l2"])),
                p4runtime_pb2.Entity(counter_entry=p4runtime_pb2.CounterEntry(counter_id=12345))])):
            got.extend(resp.entities)
    assert ei.value.code() == grpc.StatusCode.NOT_FOUND and got and all(e.HasField("table_entry") for e in got)


def test_mastership(rig):
    a = rig.stream((0, 1))
    assert a.first.arbitration.status.code == code_pb2.OK
    rig.set_pipeline(election_id=(0, 1))
    b = rig.stream((0, 2))
    nb = b.first.arbitration
    assert nb.status.code == code_pb2.OK and nb.election_id == eid(0, 2)
    na = a.recv("arbitration").arbitration
    assert na.status.code == code_pb2.ALREADY_EXISTS and na.election_id == eid(0, 2)
    # the old primary is now a backup: writes are refused, reads are fine
    with pytest.raises(grpc.RpcError) as ei:
        rig.write(upd(p4runtime_pb2.Update.INSERT, table_entry=l2_entry(rig, 1, 1)), election_id=(0, 1))
    assert ei.value.code() == grpc.StatusCode.PERMISSION_DENIED
    rig.write(upd(p4runtime_pb2.Update.INSERT, table_entry=l2_entry(rig, 1, 1)), election_id=(0, 2))
    assert len(rig.read(p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry()))) == 1
    # a third client with a lower id is a backup and only it is told
    c = rig.stream((0, 0))
    assert c.first.arbitration.status.code == code_pb2.ALREADY_EXISTS
    assert a.nothing("arbitration")
    # a duplicate election id ends that stream with INVALID_ARGUMENT
    d = rig.stream((0, 1), wait=False)
    assert d.ended.wait(5) and d.error.code() == grpc.StatusCode.INVALID_ARGUMENT
    # the primary goes away: everyone hears there is no primary
    b.close()
    assert a.recv("arbitration").arbitration.status.code == code_pb2.NOT_FOUND
    assert c.recv("arbitration").arbitration.status.code == code_pb2.NOT_FOUND
    with pytest.raises(grpc.RpcError) as ei:
        rig.write(upd(p4runtime_pb2.Update.INSERT, table_entry=l2_entry(rig, 2, 1)), election_id=(0, 2))
    assert ei.value.code() == grpc.StatusCode.PERMISSION_DENIED
    # takeover: a backup re-arbitrates with an id >= the highest seen
    a.arbitrate((0, 2))
    assert a.recv("arbitration").arbitration.status.code == code_pb2.OK
    assert c.recv("arbitration").arbitration.status.code == code_pb2.ALREADY_EXISTS
    rig.write(upd(p4runtime_pb2.Update.INSERT, table_entry=l2_entry(rig, 2, 1)), election_id=(0, 2))
    # a stream for another device id is refused
    e = rig.stream(None)
    e.arbitrate((0, 9), device_id=5)
    assert e.ended.wait(5) and e.error.code() == grpc.StatusCode.NOT_FOUND


def test_packet_out_and_in(rig):
    a = rig.stream((0, 2))
    rig.set_pipeline(election_id=(0, 2))
    po = p4runtime_pb2.StreamMessageRequest()
    po.packet.payload = b"\xde\xad\xbe\xef"
    po.packet.metadata.add(metadata_id=1, value=b"\x01\x02")  # egress_port = 258 (9 bits)
    a.send(po)
    frame = rig.packet_outs.get(timeout=5)
    # egress_port:9 = 258, _pad:7 = 0 -> 16 bits: 258 << 7
    assert frame == (258 << 7).to_bytes(2, "big") + b"\xde\xad\xbe\xef"
    # bad metadata -> StreamError on the sender's stream, nothing sent
    bad = p4runtime_pb2.StreamMessageRequest()
    bad.packet.payload = b"x"
    bad.packet.metadata.add(metadata_id=1, value=b"\x02\x00")  # 512 does not fit 9 bits
    a.send(bad)
    err = a.recv("error").error
    assert err.canonical_code == code_pb2.INVALID_ARGUMENT and err.packet_out.packet_out.payload == b"x"
    # a backup may not send packets
    b = rig.stream((0, 1))
    b.send(po)
    assert b.recv("error").error.canonical_code == code_pb2.PERMISSION_DENIED
    assert rig.packet_outs.empty()
    # packet-in: ingress_port:9 = 3, _pad:7, reason:8 = 7, then payload
    hdr = ((3 << 15) | 7).to_bytes(3, "big")
    assert rig.server.send_packet_in(hdr + b"payload")
    pin = a.recv("packet").packet
    assert pin.payload == b"payload"
    assert [(m.metadata_id, m.value) for m in pin.metadata] == [(1, b"\x03"), (2, b"\x00"), (3, b"\x07")]
    assert b.nothing("packet")
    assert not rig.server.send_packet_in(b"\x00")  # shorter than the header


def test_digests_over_stream(rig):
    a = rig.stream((0, 1))
    rig.set_pipeline()
    did = rig.ids["learn_t"]
    cfg = p4runtime_pb2.DigestEntry(digest_id=did, config=p4runtime_pb2.DigestEntry.Config(
        max_timeout_ns=1_000_000, max_list_size=10, ack_timeout_ns=10_000_000_000))
    rig.write(upd(p4runtime_pb2.Update.INSERT, digest_entry=cfg))
    st = rig.server.state
    st.digests.emit(did, (0x0000AABBCCDDEEFF & (2**48 - 1), 5))
    lst = a.recv("digest").digest  # flushed by max_timeout (1 ms) through the server's timer
    assert lst.digest_id == did and len(lst.data) == 1
    members = lst.data[0].struct.members
    assert int.from_bytes(members[0].bitstring, "big") == 0xAABBCCDDEEFF and members[1].bitstring == b"\x05"
    st.digests.emit(did, (0xAABBCCDDEEFF, 5))  # not acked yet: suppressed
    assert a.nothing("digest")
    ack = p4runtime_pb2.StreamMessageRequest()
    ack.digest_ack.digest_id, ack.digest_ack.list_id = did, lst.list_id
    a.send(ack)
    # once the ack is processed the same tuple is reported again
    for _ in range(50):
        st.digests.emit(did, (0xAABBCCDDEEFF, 5))
        try:
            a.recv("digest", timeout=0.1)
            break
        except TimeoutError:
            continue
    else:
        raise AssertionError("digest not re-sent after its ack")


def test_reconcile_and_commit_keeps_entries(rig):
    rig.stream()
    rig.set_pipeline()
    rig.write(upd(p4runtime_pb2.Update.INSERT, table_entry=l2_entry(rig, 1, 4)))
    rig.set_pipeline(SFPC.RECONCILE_AND_COMMIT)
    assert len(rig.read(p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry()))) == 1
    rig.set_pipeline(SFPC.VERIFY_AND_COMMIT)  # a plain commit starts empty
    assert rig.read(p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry())) == []


def test_a_large_failed_batch_keeps_every_code_within_default_client_limits(rig):
    """A client with gRPC's default metadata limits (8 KiB) gets every update's code: messages are
    cut to fit, codes never dropped (400 failing DELETEs, or one echoing a 5,000-byte key, made
    the client see RESOURCE_EXHAUSTED with no details until 2026-12-05)."""
    rig.stream()
    rig.set_pipeline()
    D = p4runtime_pb2.Update.DELETE
    with pytest.raises(grpc.RpcError) as ei:
        rig.write(*[upd(D, table_entry=l2_entry(rig, 1000 + i, 1)) for i in range(150)])
    assert ei.value.code() == grpc.StatusCode.UNKNOWN
    errs = write_errors(ei.value)
    assert [c for c, _ in errs] == [code_pb2.NOT_FOUND] * 150 and all(m for _, m in errs)
    huge = l2_entry(rig, 1, 1)
    huge.match[0].exact.value = b"\xff" * 5000  # too wide: the message quotes the value
    with pytest.raises(grpc.RpcError) as ei:
        rig.write(upd(D, table_entry=huge), upd(D, table_entry=l2_entry(rig, 7, 1)))
    assert [c for c, _ in write_errors(ei.value)] == [code_pb2.OUT_OF_RANGE, code_pb2.NOT_FOUND]
