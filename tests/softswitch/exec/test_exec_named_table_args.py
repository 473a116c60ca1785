"""Named arguments in a table's ``default_action`` and ``const entries`` (``a(y = 1, x = 2)``), bound
by parameter name as the P4_16 spec binds them (refused as "unsupported: named arg" until
2026-12-05)."""
from __future__ import annotations

import pytest
from exec_rig import Rig

from softswitch.frontend import load_source
from softswitch.frontend.errors import P4Error

SRC = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> c; }
struct hs_t { h_t h; }
struct m_t { }
parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start { p.extract(h.h); transition accept; }
}
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    action a(bit<8> x, bit<8> y) { h.h.b = x; h.h.c = y; }
    table t {
        key = { h.h.a : exact; }
        actions = { a; }
        const entries = { 1 : a(y = 0x12, x = 0x11); }
        default_action = a(y = 0x22, x = 0x21);
    }
    apply { s.egress_spec = 1; t.apply(); }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def test_named_arguments_bind_by_name(tmp_path):
    prog = tmp_path / "n.p4"
    prog.write_text(SRC)
    r = Rig(prog)
    assert r.output(bytes([1, 0, 0]), port=1) == bytes([1, 0x11, 0x12])  # the entry
    assert r.output(bytes([2, 0, 0]), port=1) == bytes([2, 0x21, 0x22])  # the default action


@pytest.mark.parametrize("old, new, why", [
    ("a(y = 0x22, x = 0x21)", "a(y = 0x22)", "argument for 'x' missing"),
    ("a(y = 0x22, x = 0x21)", "a(z = 0x22, x = 0x21)", "no parameter named 'z'"),
    ("a(y = 0x12, x = 0x11)", "a(y = 0x12, 0x11)", "either all arguments are named or none"),
])
def test_wrong_names_are_errors(old, new, why):
    with pytest.raises(P4Error, match=why):
        load_source(SRC.replace(old, new), "n.p4")
