"""Packet facts a program can observe, as bmv2 (simple_switch) has them and softswitch did not until
2026-12-05 (each a silent misrun, found by reading bmv2's source: docs/p4_subset.md):
``truncate`` keeps the smallest length asked for, 0 means no bytes, and multicast copies are not
truncated (each is a new packet); egress's ``packet_length`` counts the headers ingress made valid
or invalid (simple_switch's add_header/remove_header keep a length register); egress reads
``egress_spec`` as 0 (the drop port + 1 in a 9-bit field); ``verify_checksum`` skips a check whose checksum field's header
is invalid and compares the whole computed value; ``recirculate`` called in ingress recirculates."""
from __future__ import annotations

import zlib

import pytest
from exec_rig import DATA, INSERT, Rig
from p4.v1 import p4runtime_pb2

from softswitch.exec import hashes
from softswitch.frontend.errors import P4TypeError

FACTS = DATA / "exec_bmv2_packet_facts.p4"
BODY = bytes(range(0x10, 0x18))  # 8 bytes after the 2-byte header


@pytest.fixture(scope="module")
def rig():
    r = Rig(FACTS)
    mg = p4runtime_pb2.MulticastGroupEntry(multicast_group_id=5)
    mg.replicas.add(egress_port=3, instance=1)
    mg.replicas.add(egress_port=4, instance=2)
    r.write(INSERT, packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry(multicast_group_entry=mg))
    return r


def _frames(r: Rig, data: bytes, loop: bool) -> list[tuple[int, bytes]]:
    """Every frame ``data`` leaves with, through the API's methods or the loop's generated ones."""
    pl = r.pipeline
    res = pl.ingress_item(data, 1, 0) if loop else pl.ingress(data, 1, 0)
    items = [res] if res.__class__.__name__ == "PacketState" else res.to_tm
    out = []
    for it in items:
        eg = pl.egress_frame(it, 1) if loop else pl.egress(it, 1)
        if eg.__class__ is bytes:
            out.append((it.egress_port, eg))
        else:
            out += [(f.port, f.data) for f in eg.frames]
    return sorted(out)


@pytest.mark.parametrize("loop", [False, True], ids=["api", "loop"])
def test_truncate_keeps_the_smallest_length_and_spares_multicast_copies(rig, loop):
    assert _frames(rig, bytes([2, 0xBB]) + BODY, loop) == [(2, bytes([2, 0xBB, 0x10]))]
    assert _frames(rig, bytes([3, 0xBB]) + BODY, loop) == []  # truncate(0): nothing to send
    assert _frames(rig, bytes([1, 0xBB]) + BODY, loop) == [(3, bytes([1, 0xBB]) + BODY),
                                                          (4, bytes([1, 0xBB]) + BODY)]


@pytest.mark.parametrize("loop", [False, True], ids=["api", "loop"])
def test_egress_packet_length_counts_what_ingress_made_valid_or_invalid(rig, loop):
    def o(frame: bytes) -> tuple[int, int, int]:
        return int.from_bytes(frame[2:6], "big"), int.from_bytes(frame[6:8], "big"), int.from_bytes(frame[8:10], "big")

    # 4 bytes in: h.o (8 bytes) made valid twice (counted once), h.x (2 bytes) made invalid
    ((port, out),) = _frames(rig, bytes([4, 0x12, 0xAA, 0xBB]), loop)
    assert (port, o(out)) == (2, (4 + 8 - 2, 0, 0)) and len(out) == 2 + 8
    ((_, out),) = _frames(rig, bytes([5, 0x12, 0xAA, 0xBB]), loop)
    assert o(out) == (4 + 8, 0, 0) and out[10:] == bytes([0xAA, 0xBB])


@pytest.mark.parametrize("alg", ["csum16", "crc32"])
def test_verify_checksum_as_bmv2(alg):
    r = Rig(DATA / "exec_bmv2_verify_checksum.p4", defines={"ALG": alg})
    # no h.b (the checksum field's header): no verification, no error
    assert r.output(bytes([0, 0x12])) == bytes([0, 0x12, 0])
    if alg == "csum16":
        good = hashes.csum16(bytes([0x12]))
        assert r.output(bytes([1, 0x12]) + good.to_bytes(2, "big"))[-1] == 0
        assert r.output(bytes([1, 0x12]) + (good ^ 1).to_bytes(2, "big"))[-1] == 1
    else:  # crc32 into a 16-bit field: the low 16 bits match, the whole value does not
        low = zlib.crc32(bytes([0x12])) & 0xFFFF
        assert r.output(bytes([1, 0x12]) + low.to_bytes(2, "big"))[-1] == 1


def test_recirculate_called_in_ingress_is_refused(tmp_path):
    """p4c's bmv2 back end refuses a recirculate called in ingress
    (``ExternConverter_recirculate_preserving_field_list`` in ``simpleSwitch.cpp``), so bmv2 never
    sees one; softswitch ran it, recirculating after egress (2026-12-05 to 2026-12-06)."""
    src = (DATA / "exec_bmv2_packet_facts.p4").read_text()
    src = src.replace("else if (h.a.t == 5) { h.o.setValid(); }",
                      "else if (h.a.t == 5) { if (s.instance_type == 0) { recirculate_preserving_field_list(0); } "
                      "h.a.v = (bit<8>)s.instance_type; }")
    p = tmp_path / "recirc.p4"
    p.write_text(src)
    with pytest.raises(P4TypeError, match="recirculate_preserving_field_list called in ingress"):
        Rig(p)
