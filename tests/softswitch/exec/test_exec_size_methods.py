"""``minSizeInBits``/``minSizeInBytes``/``maxSizeInBits``/``maxSizeInBytes`` of any value or type
that has a width, folded as p4c folds them (``TypeMap::widthBits``: a varbit counts 0, or its
maximum for the max forms; a header_union its widest member; a stack its size times its
element): on ``bit<W>``/``bool`` values, stacks, unions, type names (``T32.minSizeInBits()``) and
the max forms were refused until 2026-12-05 (p4c's ``issue1717`` sample uses some)."""
from __future__ import annotations

from exec_rig import Rig

SRC = """
#include <core.p4>
#include <v1model.p4>
typedef bit<32> T32;
header v_t { bit<8> a; varbit<16> v; }
header e_t { bit<8> x; }
header a_t { bit<8> x; }
header b_t { bit<24> y; }
header_union u_t { a_t a; b_t b; }
header o_t { bit<8> s0; bit<8> s1; bit<8> s2; bit<8> s3; bit<8> s4; bit<8> s5; bit<8> s6; bit<8> s7; bit<8> s8; }
struct hs_t { e_t e; o_t o; v_t vh; e_t[2] st; u_t u; }
struct m_t { }
parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start { p.extract(h.e); transition accept; }
}
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    apply {
        s.egress_spec = 1;
        bool b = true;
        int<4> i = 1;
        h.o.setValid();
        h.o.s0 = (bit<8>)h.vh.minSizeInBits();    // 8
        h.o.s1 = (bit<8>)h.vh.maxSizeInBits();    // 24
        h.o.s2 = (bit<8>)h.vh.maxSizeInBytes();   // 3
        h.o.s3 = (bit<8>)h.st.minSizeInBytes();   // 2
        h.o.s4 = (bit<8>)h.u.minSizeInBits();     // 24: the widest member
        h.o.s5 = (bit<8>)T32.minSizeInBits();     // 32
        h.o.s6 = (bit<8>)b.minSizeInBits();       // 1
        h.o.s7 = (bit<8>)i.maxSizeInBits();       // 4
        h.o.s8 = (bit<8>)h.e.x.minSizeInBytes();  // 1
    }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.e); p.emit(h.o); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def test_sizes_fold_as_p4c_folds_them(tmp_path):
    prog = tmp_path / "sz.p4"
    prog.write_text(SRC)
    assert Rig(prog).output(b"\x07", port=1) == bytes([7, 8, 24, 3, 2, 24, 32, 1, 4, 1])
