"""A header field named like a built-in method (``isValid``, ``minSizeInBits``): a call is the
method, anything else the field, as p4c's type checker resolves a member (its ``inMethod`` test;
p4c's ``issue1717`` sample).  Such a field was not assignable ("expression is not assignable")
and not comparable until 2026-12-05."""
from __future__ import annotations

from exec_rig import Rig

SRC = """
#include <core.p4>
#include <v1model.p4>
header hv_t { bit<8> isValid; bit<8> minSizeInBits; }
struct hs_t { hv_t v; }
struct m_t { }
parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start { p.extract(h.v); transition accept; }
}
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    apply {
        s.egress_spec = 1;
        if (h.v.isValid() && h.v.isValid == 3) {
            h.v.isValid = h.v.isValid + (bit<8>)h.v.minSizeInBits();  // the field + the method: 3 + 16
            h.v.minSizeInBits = 7;
        }
    }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.v); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def test_a_call_is_the_method_anything_else_the_field(tmp_path):
    prog = tmp_path / "f.p4"
    prog.write_text(SRC)
    r = Rig(prog)
    assert r.output(bytes([3, 9]), port=1) == bytes([19, 7])
    assert r.output(bytes([4, 9]), port=1) == bytes([4, 9])
