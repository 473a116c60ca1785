"""A control type may take the name of a v1model extern function: p4c looks a type name up among
type declarations and a called name among functions, and compiles its sample
``issue1653-complex-bmv2`` (``control verify_checksum(...)``, instantiated in ``V1Switch``).
softswitch refused it: "'verify_checksum' is already declared".  A call of the function (here
from a control declared before the type) still reaches the function."""
from __future__ import annotations

from exec_rig import Rig

PROG = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<16> c; }
struct H { h_t h; }
struct M { }
parser P(packet_in p, out H h, inout M m, inout standard_metadata_t s) {
    state start { p.extract(h.h); transition accept; }
}
control I(inout H h, inout M m, inout standard_metadata_t s) {
    apply { h.h.b = (bit<8>)s.checksum_error; s.egress_spec = 9w1; }
}
control E(inout H h, inout M m, inout standard_metadata_t s) { apply { } }
control V(inout H h, inout M m) {
    apply { verify_checksum(true, { h.h.a }, h.h.c, HashAlgorithm.csum16); }
}
control verify_checksum(inout H h, inout M m) { apply { } }
control D(packet_out p, in H h) { apply { p.emit(h.h); } }
V1Switch(P(), V(), I(), E(), verify_checksum(), D()) main;
"""


def test_control_named_like_an_extern_function(tmp_path) -> None:
    p = tmp_path / "vc.p4"
    p.write_text(PROG)
    r = Rig(p)
    # csum16 over the byte 0x01 (padded to 16 bits: 0x0100) is 0xfeff
    _res, eg = r.run(bytes([1, 7, 0xFE, 0xFF]), 0)
    assert eg[0].frames[0].data[1] == 0
    _res, eg = r.run(bytes([1, 7, 0x12, 0x34]), 0)
    assert eg[0].frames[0].data[1] == 1
