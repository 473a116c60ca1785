"""The deprecated v1model calls with a non-empty list, through the compiled pipeline:
``clone3(type, session, {fields})`` and ``resubmit({fields})`` preserve the user-metadata fields
the list names (p4c's bmv2 back end gives them a field list; bmv2 copies the values at the end of
ingress), and ``digest(receiver, {list})`` is a digest of a tuple type that p4c's P4Info names
``digest_0``, ``digest_1``, ... (its expected P4Info for issue430-1-bmv2: ``digest_0``, id
401776493, ``type_spec { tuple { bit<48> } }``)."""
from __future__ import annotations

import pytest
from exec_rig import DATA, INSERT, Rig
from p4.v1 import p4runtime_pb2

from softswitch.frontend import P4Error, load_source
from softswitch.runtime.digests import digest_values

PROG = DATA / "exec_deprecated_lists.p4"
ETH = bytes.fromhex("000000000001" "000000000002") + b"\x90\x00"


@pytest.fixture(scope="module")
def rig():
    r = Rig(PROG)
    cs = p4runtime_pb2.CloneSessionEntry(session_id=5)
    cs.replicas.add(egress_port=6, instance=1)
    r.write(INSERT, packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry(
        clone_session_entry=cs))
    return r


def frames(rig, op, a=0, b=0, c=0, d=0) -> dict[int, bytes]:
    res, egs = rig.run(ETH + bytes([op, a, b, c, d, 0]))
    assert not res.dropped, res.drop_reason
    return {e.frames[0].port: e.frames[0].data[14:] for e in egs}


@pytest.mark.parametrize("a,b,c,d", [(0x10, 0x20, 0x30, 0x40), (0xFF, 1, 2, 3)])
def test_clone3_preserves_the_listed_metadata_fields(rig, a, b, c, d):
    out = frames(rig, 1, a, b, c, d)
    assert out[1] == bytes([1, a, b, c, d, 0])  # the original, untouched by egress
    # a with its end-of-ingress value, the whole struct inr, b not listed: 0
    assert out[6] == bytes([1, (a + 1) & 0xFF, 0, c, d, 0])


def test_clone3_preserves_a_listed_standard_metadata_field(rig):
    # ONOS fabric.p4's acl.set_clone_session_id: clone3(I2E, id, {standard_metadata.ingress_port})
    _res, egs = rig.run(ETH + bytes([5, 0x42, 0, 0, 0, 0]), port=3)
    out = {e.frames[0].port: e.frames[0].data[14:] for e in egs}
    assert out[6] == bytes([5, 0x42, 0, 0, 0, 3])  # the clone still knows it came in on port 3
    assert out[1] == bytes([5, 0x42, 0, 0, 0, 0])  # the original: egress leaves it alone


def test_clone3_without_standard_metadata_in_the_list_reads_port_0(rig):
    _res, egs = rig.run(ETH + bytes([1, 1, 2, 3, 4, 0]), port=3)
    out = {e.frames[0].port: e.frames[0].data[14:] for e in egs}
    assert out[6][5] == 0  # bmv2 resets standard_metadata on the copy


def test_resubmit_preserves_the_listed_field_across_passes(rig):
    out = frames(rig, 2)
    assert out[1][5] == 3  # rounds counted over three passes (each pass resets the rest)
    assert out[1][2] == 0x33


def test_digest_of_lists_in_p4info(rig):
    ds = {d.preamble.name: d for d in rig.p4info.digests}
    assert list(ds) == ["digest_0", "digest_1"]
    assert ds["digest_0"].preamble.id == 401776493  # p4c's id for the name
    assert [m.bitstring.bit.bitwidth for m in ds["digest_0"].type_spec.tuple.members] == [8, 16]
    assert [m.bitstring.bit.bitwidth for m in ds["digest_1"].type_spec.tuple.members] == [8]
    assert not rig.p4info.type_info.structs


def test_digest_of_a_list_is_delivered_as_a_tuple(rig):
    got = []
    rig.state.digests.set_sink(got.append)
    for name in ("digest_0", "digest_1"):
        rig.write(INSERT, digest_entry=p4runtime_pb2.DigestEntry(
            digest_id=rig._id("digests", name), config=p4runtime_pb2.DigestEntry.Config(max_list_size=1)))
    frames(rig, 3, a=0x44)
    frames(rig, 4, b=0x55)
    by_id = {g.digest_id: g for g in got}
    assert by_id[rig._id("digests", "digest_0")].values == [(0x44, 0x9000)]
    assert by_id[rig._id("digests", "digest_1")].values == [(0x55,)]
    msg = rig.state.digests.to_proto(by_id[rig._id("digests", "digest_0")])
    assert msg.data[0].WhichOneof("data") == "tuple"
    assert digest_values(msg.data[0]) == (0x44, 0x9000)


@pytest.mark.parametrize("old,new,msg", [
    ("{ m.a, m.inr, local_copy }", "{ m.a, h.op.a }",
     "unsupported: clone3 .* with a field list element 'h' \\(only fields of the user metadata"),
    ("{ m.a, m.inr, local_copy }", "{ m.a + 1 }",
     "unsupported: clone3 .* with a field list element that is not a variable"),
    ("digest(2, { h.op.b });", "digest(2, { h.op.b, true });",
     "unsupported: a digest list element of type bool"),
])
def test_other_list_elements_are_rejected_by_name(old, new, msg):
    src = PROG.read_text().replace(old, new, 1)
    with pytest.raises(P4Error, match=rf"x\.p4:\d+:\d+: .*{msg}"):
        load_source(src, "x.p4")
