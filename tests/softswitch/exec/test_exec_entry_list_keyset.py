"""An entry's keyset written as a list expression: ``{(8w1 ++ 8w2)} : set(...)`` for a one-key
table, ``{1, 2} : ...`` for two keys.  p4c keeps an entry's keyset as a list of components and
unifies its type with the key's tuple (TypeInference::postorder(IR::Entry)), so a list
expression is the entry's keys as they are: its front end prints p4c's ``action-two-params``
sample's ``{(8w0x20++8w0x02++8w0x04++8w0x20)}`` as ``32w0x20020420`` and writes the table with
``has_initial_entries``.  softswitch refused it ("type mismatch: expected bit<32>, got
tuple<bit<32>>")."""
from __future__ import annotations

import pytest
from exec_rig import Rig

from softswitch.frontend import P4Error
from softswitch.p4info import build_p4info

PROG = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> o; }
struct H { h_t h; }
struct M { }
parser P(packet_in pkt, out H h, inout M m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.h); transition accept; } }
control VC(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    action set(bit<8> v) { h.h.o = v; }
    table one { key = { h.h.a ++ h.h.b : exact @name("ab"); } actions = { set; NoAction; }
        const entries = { {(8w1 ++ 8w2)} : set(8w11); { 16w0x0304 } : set(8w12); } }
    table two { key = { h.h.a : exact; h.h.b : exact; } actions = { set; NoAction; }
        const entries = { { 8w5, 8w6 } : set(8w21); } }
    apply { if (!one.apply().hit) { two.apply(); } sm.egress_spec = 1; }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pkt, in H h) { apply { pkt.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


@pytest.fixture
def rig(tmp_path) -> Rig:
    p = tmp_path / "listkey.p4"
    p.write_text(PROG)
    return Rig(p)


@pytest.mark.parametrize("a,b,want", [(1, 2, 11), (3, 4, 12), (5, 6, 21), (2, 1, 0)])
def test_list_keyset_entries_match(rig: Rig, a: int, b: int, want: int) -> None:
    _res, eg = rig.run(bytes([a, b, 0]), 0)
    assert eg[0].frames[0].data[2] == want


def test_p4info_marks_initial_entries(rig: Rig) -> None:
    p = build_p4info(rig.program)
    assert all(t.has_initial_entries and t.is_const_table for t in p.tables)


def test_list_with_the_wrong_number_of_keys_is_refused(tmp_path) -> None:
    p = tmp_path / "bad.p4"
    p.write_text(PROG.replace("{ 8w5, 8w6 }", "{ 8w5 }"))
    with pytest.raises(P4Error, match="entry has 1 keys, table has 2"):
        Rig(p)
