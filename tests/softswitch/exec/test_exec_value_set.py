"""Parser value sets (``value_set<T>(size)``, issue 16): P4Info as p4c writes it, members over
P4Runtime (``ValueSetEntry``: MODIFY replaces the set), and the parser matching them."""
from __future__ import annotations

import queue

import grpc
import pytest
from exec_rig import DATA, MODIFY, Rig
from google.rpc import code_pb2, status_pb2
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from softswitch.frontend import load_source
from softswitch.frontend.errors import P4Error
from softswitch.runtime.errors import P4RuntimeError

PROGRAM = DATA / "exec_value_set.p4"
ETH = bytes(6) + bytes([0, 0, 0, 0, 0, 1])


@pytest.fixture()
def rig():
    return Rig(PROGRAM)


def vs_id(rig, name: str) -> int:
    return next(v.preamble.id for v in rig.p4info.value_sets if name in (v.preamble.name, v.preamble.alias))


def types_entry(rig, *types: int) -> p4runtime_pb2.ValueSetEntry:
    vse = p4runtime_pb2.ValueSetEntry(value_set_id=vs_id(rig, "tag_types"))
    for t in types:
        vse.members.add().match.add(field_id=1).exact.value = t.to_bytes(2, "big")
    return vse


def run(rig, data: bytes) -> tuple[int, bytes]:
    res = rig.pipeline.ingress(data, 1, 0)
    item = res.to_tm[0]
    return item.egress_port, rig.pipeline.egress(item, 0).frames[0].data


def frame(etype: int, kind: int = 0, prio: int = 0, vid: int = 0, mark: int = 0x40) -> bytes:
    return ETH + etype.to_bytes(2, "big") + bytes([kind, prio]) + vid.to_bytes(2, "big") + bytes([mark, 0xEE])


def test_p4info_has_the_sets_as_p4c_writes_them(rig):
    """p4c (its pvs-bitstring/pvs-struct samples): prefix 0x03 ids, the parser's name as prefix
    (or @name), one unnamed EXACT field for bit<W>, one field per struct member with its @match."""
    sets = {v.preamble.name: v for v in rig.p4info.value_sets}
    assert list(sets) == ["MyParser.tag_types", "MyParser.special_tags"]
    t, s = sets["MyParser.tag_types"], sets["MyParser.special_tags"]
    assert t.preamble.id >> 24 == 0x03 and s.preamble.id >> 24 == 0x03
    assert (t.preamble.alias, t.size, s.preamble.alias, s.size) == ("tag_types", 4, "special_tags", 8)
    mf = p4info_pb2.MatchField
    assert [(m.id, m.name, m.bitwidth, m.match_type) for m in t.match] == [(1, "", 16, mf.EXACT)]
    assert [(m.id, m.name, m.bitwidth, m.match_type) for m in s.match] == [
        (1, "kind", 8, mf.TERNARY), (2, "prio", 8, mf.LPM), (3, "vid", 16, mf.RANGE), (4, "low", 4, mf.EXACT)]
    assert not rig.p4info.type_info.structs  # the struct type is not exported (p4c neither)


def test_an_empty_set_matches_nothing_and_a_member_is_parsed(rig):
    assert run(rig, frame(0x88B5))[0] == 2  # not a member yet: default -> accept, tag not parsed
    rig.write(MODIFY, value_set_entry=types_entry(rig, 0x88B5, 0x88B6))
    assert run(rig, frame(0x88B5))[0] == 3
    assert run(rig, frame(0x88B6))[0] == 3
    assert run(rig, frame(0x88B7))[0] == 2
    # MODIFY replaces the whole set
    rig.write(MODIFY, value_set_entry=types_entry(rig, 0x88B7))
    assert [run(rig, frame(t))[0] for t in (0x88B5, 0x88B6, 0x88B7)] == [2, 2, 3]


def test_a_constant_case_before_the_set_wins(rig):
    rig.write(MODIFY, value_set_entry=types_entry(rig, 0x0800))
    assert run(rig, frame(0x0800))[0] == 2  # 0x0800: accept comes first


def test_struct_set_matches_each_field_by_its_kind(rig):
    rig.write(MODIFY, value_set_entry=types_entry(rig, 0x88B5))
    vse = p4runtime_pb2.ValueSetEntry(value_set_id=vs_id(rig, "special_tags"))
    m = vse.members.add()
    fm = m.match.add(field_id=1)
    fm.ternary.value, fm.ternary.mask = b"\x10", b"\xf0"       # kind 0x1?
    fm = m.match.add(field_id=2)
    fm.lpm.value, fm.lpm.prefix_len = b"\xa0", 3               # prio 101xxxxx
    fm = m.match.add(field_id=3)
    fm.range.low, fm.range.high = b"\x00\x64", b"\x00\xc8"     # vid 100..200
    m.match.add(field_id=4).exact.value = b"\x05"              # vid's low nibble 5
    rig.write(MODIFY, value_set_entry=vse)
    hit = frame(0x88B5, kind=0x13, prio=0xB7, vid=0x75)         # 117: low nibble 5
    port, out = run(rig, hit)
    assert port == 4 and out[-2:] == bytes([0x41, 0xEE])        # mark parsed and incremented
    for miss in (frame(0x88B5, kind=0x23, prio=0xB7, vid=0x75),  # ternary
                 frame(0x88B5, kind=0x13, prio=0xC7, vid=0x75),  # lpm
                 frame(0x88B5, kind=0x13, prio=0xB7, vid=0xC5 + 0x10),  # range (213)
                 frame(0x88B5, kind=0x13, prio=0xB7, vid=0x76)):  # exact
        assert run(rig, miss)[0] == 3
    # ternary/lpm/range fields may be left out (don't care); the exact one may not
    vse2 = p4runtime_pb2.ValueSetEntry(value_set_id=vs_id(rig, "special_tags"))
    vse2.members.add().match.add(field_id=4).exact.value = b"\x06"
    rig.write(MODIFY, value_set_entry=vse2)
    assert run(rig, frame(0x88B5, kind=0xFF, prio=0, vid=0xF6))[0] == 4


def test_p4runtime_errors_change_nothing(rig):
    rig.write(MODIFY, value_set_entry=types_entry(rig, 0x88B5))
    for utype in (p4runtime_pb2.Update.INSERT, p4runtime_pb2.Update.DELETE):
        with pytest.raises(P4RuntimeError) as ei:
            rig.write(utype, value_set_entry=types_entry(rig, 0x88B6))
        assert ei.value.code == code_pb2.INVALID_ARGUMENT and "only MODIFY" in ei.value.message
    with pytest.raises(P4RuntimeError) as ei:
        rig.write(MODIFY, value_set_entry=types_entry(rig, 1, 2, 3, 4, 5))
    assert ei.value.code == code_pb2.RESOURCE_EXHAUSTED and "its size is 4" in ei.value.message
    bad = types_entry(rig, 0x88B6)
    bad.members.add()  # a member without its exact field
    with pytest.raises(P4RuntimeError) as ei:
        rig.write(MODIFY, value_set_entry=bad)
    assert ei.value.code == code_pb2.INVALID_ARGUMENT and "missing" in ei.value.message
    with pytest.raises(P4RuntimeError) as ei:
        rig.write(MODIFY, value_set_entry=p4runtime_pb2.ValueSetEntry(value_set_id=0x03000001))
    assert ei.value.code == code_pb2.NOT_FOUND
    assert run(rig, frame(0x88B5))[0] == 3 and run(rig, frame(0x88B6))[0] == 2  # unchanged
    got = rig.state.read(p4runtime_pb2.Entity(value_set_entry=p4runtime_pb2.ValueSetEntry()))
    assert [(e.value_set_entry.value_set_id, len(e.value_set_entry.members)) for e in got] == [
        (vs_id(rig, "tag_types"), 1), (vs_id(rig, "special_tags"), 0)]
    assert got[0].value_set_entry.members[0].match[0].exact.value == b"\x88\xb5"


_SRC = PROGRAM.read_text()


@pytest.mark.parametrize("old,new,msg", [
    ("sm.egress_spec = 2;", "sm.egress_spec = 2; bit<16> x = tag_types;", "'tag_types' is not declared"),
    ("pkt.extract(h.eth);", "pkt.extract(h.eth); bit<16> y = tag_types;",
     "value_set 'tag_types' can only be a keyset of a select case"),
    ("transition select(h.eth.type) {", "transition select(h.eth.dst) {",
     "value_set 'tag_types' of bit<16> cannot match a select on (bit<48>)"),
    ("transition select(h.tag.kind, h.tag.prio, h.tag.vid, h.tag.vid[3:0]) {",
     "transition select(h.tag.kind, h.tag.prio, h.tag.vid) {",
     "value_set 'specials' of (bit<8>, bit<8>, bit<16>, bit<4>) cannot match a select on (bit<8>, bit<8>, bit<16>)"),
    ("value_set<bit<16>>(4) tag_types;", "value_set<bool>(4) tag_types;",
     "unsupported: value_set of type bool"),
    ("value_set<bit<16>>(4) tag_types;", "value_set<bit<16>>(0) tag_types;", "size must be a positive constant"),
    ("@match(lpm)     bit<8> prio;", "@match(fuzzy) bit<8> prio;", "has @match(fuzzy)"),
])
def test_misuse_is_an_error_at_its_position(old, new, msg):
    assert old in _SRC
    with pytest.raises(P4Error) as ei:
        load_source(_SRC.replace(old, new, 1), "vs.p4")
    assert msg in str(ei.value) and "vs.p4:" in str(ei.value)


def test_a_value_set_in_a_sub_parser_is_rejected_by_name():
    src = _SRC.replace("parser MyParser(", """parser Sub(packet_in pkt, inout tag_t t) {
    value_set<bit<8>>(2) kinds;
    state start { transition select(t.kind) { kinds: accept; default: accept; } }
}
parser MyParser(""", 1).replace("value_set<bit<16>>(4) tag_types;", "value_set<bit<16>>(4) tag_types; Sub() sub;", 1) \
        .replace("state parse_mark {", "state parse_sub { sub.apply(pkt, h.tag); transition accept; }\n    state parse_mark {")
    with pytest.raises(P4Error) as ei:
        load_source(src, "vs.p4")
    assert "unsupported: value_set in a sub-parser" in str(ei.value) and "vs.p4:" in str(ei.value)


def test_members_written_over_grpc_steer_the_running_switch():
    """The real switch (in-process, its gRPC P4Runtime server and packet loop): a primary client
    writes the set with a Write RPC, reads it back, and an injected frame takes the new parse path."""
    from softswitch import SoftSwitch

    with SoftSwitch(PROGRAM) as sw:
        loop = sw.switch.loop
        sent: queue.Queue = queue.Queue()
        loop.set_tx_hook(lambda port, data: sent.put((port, data)))
        channel = grpc.insecure_channel(sw.grpc_addr)
        stub = p4runtime_pb2_grpc.P4RuntimeStub(channel)
        reqs: queue.Queue = queue.Queue()
        stream = stub.StreamChannel(iter(reqs.get, None))
        try:
            arb = p4runtime_pb2.StreamMessageRequest()
            arb.arbitration.device_id = 1
            arb.arbitration.election_id.low = 1
            reqs.put(arb)
            first = next(stream)
            assert first.WhichOneof("update") == "arbitration"
            info = stub.GetForwardingPipelineConfig(
                p4runtime_pb2.GetForwardingPipelineConfigRequest(device_id=1)).config.p4info
            vid = next(v.preamble.id for v in info.value_sets if v.preamble.name == "MyParser.tag_types")

            def send_and_wait(data: bytes) -> int:
                loop.inject(1, data)
                port, _ = sent.get(timeout=10)
                return port

            assert send_and_wait(frame(0x88B5)) == 2
            up = p4runtime_pb2.Update(type=p4runtime_pb2.Update.MODIFY)
            up.entity.value_set_entry.value_set_id = vid
            up.entity.value_set_entry.members.add().match.add(field_id=1).exact.value = b"\x88\xb5"
            stub.Write(p4runtime_pb2.WriteRequest(device_id=1, election_id=p4runtime_pb2.Uint128(low=1),
                                                  updates=[up]))
            got = list(stub.Read(p4runtime_pb2.ReadRequest(device_id=1, entities=[p4runtime_pb2.Entity(
                value_set_entry=p4runtime_pb2.ValueSetEntry(value_set_id=vid))])))
            assert got[0].entities[0].value_set_entry.members[0].match[0].exact.value == b"\x88\xb5"
            assert send_and_wait(frame(0x88B5)) == 3
            up.type = p4runtime_pb2.Update.INSERT
            with pytest.raises(grpc.RpcError) as ei:
                stub.Write(p4runtime_pb2.WriteRequest(device_id=1, election_id=p4runtime_pb2.Uint128(low=1),
                                                      updates=[up]))
            assert ei.value.code() == grpc.StatusCode.UNKNOWN  # P4Runtime: per-update errors in details
            details = dict(ei.value.trailing_metadata())["grpc-status-details-bin"]
            err = p4runtime_pb2.Error()
            status_pb2.Status.FromString(details).details[0].Unpack(err)
            assert err.canonical_code == code_pb2.INVALID_ARGUMENT and "only MODIFY" in err.message
        finally:
            reqs.put(None)
            stream.cancel()
            channel.close()


def test_a_value_set_of_a_nested_struct_is_rejected_by_name():
    """p4c's pvs-nested-struct: P4Runtime describes a value set's struct fields only as bit<W>
    match fields, and p4c's P4Info generation (addValueSet) refuses any other field type."""
    src = _SRC.replace("struct tag_key_t {", "struct inner_t { bit<8> x; }\nstruct nested_t { bit<16> a; inner_t inner; }\n"
                       "struct tag_key_t {", 1) \
        .replace("value_set<bit<16>>(4) tag_types;", "value_set<nested_t>(4) nested; value_set<bit<16>>(4) tag_types;", 1)
    with pytest.raises(P4Error) as ei:
        load_source(src, "vs.p4")
    msg = str(ei.value)
    assert "vs.p4:22:" in msg and "unsupported: value_set of type nested_t: its field 'inner' has type inner_t" in msg
