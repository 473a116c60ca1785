"""A digest whose struct holds a plain ``enum``, an ``error``, a serializable enum and a bool
(p4c's v1model-digest-containing-ser-enum / -custom-type samples): P4Info names the types as
p4c does (``enum``/``error`` type specs, ``type_info.enums`` and ``type_info.error``), and a
packet through the compiled pipeline reaches a P4Runtime client as a DigestList over real gRPC,
each enum/error as a bitstring: the plain enum's member index and the error's number (bmv2
holds both in 32-bit fields), the serializable enum's value, the bool as one bit."""
from __future__ import annotations

import grpc
import pytest
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc
from p4rt_helpers import StreamClient, eid

from softswitch.exec import build_pipeline
from softswitch.frontend import load_source
from softswitch.frontend.errors import P4Error
from softswitch.p4info import build_p4info
from softswitch.p4rt import P4RuntimeServer
from softswitch.runtime import SwitchState

SRC = """
#include <core.p4>
#include <v1model.p4>
error { Mine }
enum kind_t { Zero, One, Two }
enum bit<8> ser_t { foo = 28, gah = 42 }
struct dg_t { bit<48> mac; error e; kind_t k; ser_t s; bool b; }
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
struct hs_t { eth_t eth; }
struct m_t { dg_t d; }
parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start { p.extract(h.eth); transition accept; } }
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    apply {
        m.d.mac = h.eth.src;
        m.d.e = h.eth.type == 1 ? error.Mine : error.PacketTooShort;
        m.d.k = h.eth.type == 1 ? kind_t.Two : kind_t.One;
        m.d.s = ser_t.gah;
        m.d.b = h.eth.type == 1;
        digest<dg_t>(1, m.d);
        s.egress_spec = 1;
    }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.eth); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def test_p4info_has_the_enum_and_error_types_as_p4c_gives_them():
    info = build_p4info(load_source(SRC, "d.p4"))
    (d,) = info.digests
    assert d.preamble.name == "dg_t" and d.type_spec.struct.name == "dg_t"
    members = {m.name: m.type_spec for m in info.type_info.structs["dg_t"].members}
    assert members["e"].WhichOneof("type_spec") == "error"
    assert members["k"].enum.name == "kind_t"
    assert members["s"].serializable_enum.name == "ser_t"
    assert members["b"].WhichOneof("type_spec") == "bool"
    assert [m.name for m in info.type_info.enums["kind_t"].members] == ["Zero", "One", "Two"]
    assert list(info.type_info.error.members) == [
        "NoError", "PacketTooShort", "NoMatch", "StackOutOfBounds", "HeaderTooShort", "ParserTimeout",
        "ParserInvalidArgument", "Mine"]


def test_a_type_p4info_cannot_hold_is_named_at_its_place():
    src = SRC.replace("struct dg_t { bit<48> mac;", "header x_t { bit<8> a; } struct dg_t { bit<48> mac; x_t[2] st;")
    with pytest.raises(P4Error) as ei:
        build_p4info(load_source(src, "d.p4"))
    msg = str(ei.value)
    assert msg.startswith("d.p4:") and "x_t[2] cannot appear in P4Info" in msg and "StackT" not in msg, msg


@pytest.fixture()
def switch():
    program = load_source(SRC, "d.p4")
    p4info = build_p4info(program)
    states: list = []

    def make_state(info, _cfg):
        st = SwitchState(info)
        states.append(st)
        return st

    server = P4RuntimeServer(1, make_state, lambda *_a: None, "127.0.0.1:0")
    port = server.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    stub = p4runtime_pb2_grpc.P4RuntimeStub(channel)
    stream = StreamClient(stub)
    try:
        stream.arbitrate((0, 1))
        stream.recv("arbitration")
        req = p4runtime_pb2.SetForwardingPipelineConfigRequest(
            device_id=1, election_id=eid(0, 1),
            action=p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
        req.config.p4info.CopyFrom(p4info)
        stub.SetForwardingPipelineConfig(req)
        did = p4info.digests[0].preamble.id
        cfg = p4runtime_pb2.DigestEntry(digest_id=did, config=p4runtime_pb2.DigestEntry.Config(
            max_timeout_ns=1_000_000, max_list_size=1, ack_timeout_ns=10_000_000_000))
        upd = p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT, entity=p4runtime_pb2.Entity(digest_entry=cfg))
        stub.Write(p4runtime_pb2.WriteRequest(device_id=1, election_id=eid(0, 1), updates=[upd]))
        pipeline = build_pipeline(program, states[-1], None)
        yield pipeline, stream, did
    finally:
        stream.close()
        channel.close()
        server.stop()


@pytest.mark.parametrize("etype,expect", [
    (1, [0xAABBCCDDEEFF, 7, 2, 42, 1]),   # error.Mine (7th after core's), kind_t.Two, gah, true
    (2, [0xAABBCCDDEEFF, 1, 1, 42, 0]),   # error.PacketTooShort, kind_t.One, false
])
def test_digest_list_carries_enums_as_bitstrings(switch, etype, expect):
    pipeline, stream, did = switch
    frame = bytes(6) + bytes.fromhex("aabbccddeeff") + etype.to_bytes(2, "big")
    res = pipeline.ingress(frame, 1, 0)
    assert not res.dropped
    lst = stream.recv("digest").digest
    assert lst.digest_id == did and len(lst.data) == 1
    got = [int.from_bytes(m.bitstring, "big") for m in lst.data[0].struct.members]
    assert got == expect
    assert all(m.WhichOneof("data") == "bitstring" for m in lst.data[0].struct.members)
