"""The loop's entry points call the verify/compute checksum controls only when one of their
checksum calls' ``hdr.h.isValid()`` conditions holds (``Compiler._checksum_guard``): such a
control does nothing otherwise.  Any other statement or condition keeps the plain call.  The
frames and ``checksum_error`` are those of the API's path (which always calls the controls)."""
from __future__ import annotations

import pytest
from exec_rig import Rig, through_api, through_loop

PROG = """
#include <core.p4>
#include <v1model.p4>
header e_t { bit<8> kind; }
header ip_t { bit<8> ttl; bit<8> x; bit<16> csum; }
header o_t { bit<8> err; }
struct H { o_t o; e_t e; ip_t ip; }
struct M { }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(h.e); transition select(h.e.kind) { 4: ip; default: accept; } }
    state ip { pk.extract(h.ip); transition accept; }
}
control VC(inout H h, inout M m) {
    apply { verify_checksum(COND, { h.ip.ttl, h.ip.x }, h.ip.csum, HashAlgorithm.csum16); }
}
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 2;
        h.o.setValid();
        h.o.err = (bit<8>)sm.checksum_error;
        if (h.ip.isValid()) { h.ip.ttl = h.ip.ttl - 1; }
    }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H h, inout M m) {
    apply { update_checksum(h.ip.isValid(), { h.ip.ttl, h.ip.x }, h.ip.csum, HashAlgorithm.csum16); }
}
control D(packet_out pk, in H h) { apply { pk.emit(h.o); pk.emit(h.e); pk.emit(h.ip); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def _csum(ttl: int, x: int) -> int:
    s = (ttl << 8) | x
    return ~s & 0xFFFF


def _frames():
    good = bytes([4, 64, 9]) + _csum(64, 9).to_bytes(2, "big")
    bad = bytes([4, 64, 9, 0x12, 0x34])
    return [good + b"pay", bad + b"pay", b"\x06" + b"no ip here", good, b"\x06", bad]


@pytest.mark.parametrize("cond, guarded", [("h.ip.isValid()", True), ("true", False),
                                           ("h.ip.isValid() && h.e.isValid()", False)])
def test_guard_and_frames(tmp_path, cond, guarded):
    src = tmp_path / "cs.p4"
    src.write_text(PROG.replace("COND", cond))
    rig = Rig(src)
    g = rig.pipeline.blocks.guards
    assert g.get("blk_verify") == ("H.f_ip.valid" if guarded else None)
    assert g.get("blk_compute") == "H.f_ip.valid"
    frames = _frames() * 2
    loop = [through_loop(rig.pipeline, f) for f in frames]
    assert loop == [through_api(rig.pipeline, f) for f in frames]
    good_out = bytes([0, 4, 63, 9]) + _csum(63, 9).to_bytes(2, "big")
    assert loop[0] == good_out + b"pay"
    assert loop[1] == bytes([1, 4, 63, 9]) + _csum(63, 9).to_bytes(2, "big") + b"pay"  # error, then fixed
    assert loop[2] == b"\x00\x06no ip here"  # no IP: no verification, no error left from the packet before
