"""``direct_meter.read()`` into a variable the action declares: p4c's bmv2 back end emits no code
for ``read`` and makes the variable a field the table writes at the hit, before the action runs, so
the action finds the colour there (a declaration without an initialiser leaves it as it is).  It
read 0 (GREEN) whatever the meter said: the table wrote the colour, then the action's declaration
zeroed it.  Found by a differential fuzzer of the meters (2026-12-05)."""
from __future__ import annotations

import pytest
from exec_rig import MODIFY, Rig, egress_item, ingress_items
from p4.v1 import p4runtime_pb2

SRC = """
#include <core.p4>
#include <v1model.p4>
header a_t { bit<8> k; bit<8> col; }
struct hs_t { a_t a; }
struct c_t { bit<8> f; }
struct m_t { bit<8> x; }
parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start { p.extract(h.a); transition accept; } }
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    direct_meter<bit<8>>(MeterType.packets) dm;
    action rd() { DECL }
    table t { key = { h.a.k : exact; } actions = { rd; NoAction; } meters = dm; default_action = NoAction(); }
    apply { s.egress_spec = 2; t.apply(); }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.a); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


@pytest.mark.parametrize("fast", [False, True], ids=["api", "loop"])
@pytest.mark.parametrize("decl", [
    "bit<8> c; dm.read(c); h.a.col = c;",
    "c_t tmp; dm.read(tmp.f); h.a.col = tmp.f;",
    "bit<8> c; dm.read(c); h.a.col = c + 10;",
], ids=["scalar", "struct-member", "used-in-expression"])
def test_direct_meter_colour_in_an_action_local(tmp_path, fast, decl):
    (tmp_path / "m.p4").write_text(SRC.replace("DECL", decl))
    rig = Rig(tmp_path / "m.p4")
    t = next(x for x in rig.p4info.tables if x.preamble.name == "I.t")
    key = t.match_fields[0].name
    red = rig.entry("I.t", {key: ("exact", 1)}, rig.action("I.rd"))
    rig.entry("I.t", {key: ("exact", 2)}, rig.action("I.rd"))
    # all-zero rates: every packet RED; the other entry keeps no config: every packet GREEN
    rig.write(MODIFY, direct_meter_entry=p4runtime_pb2.DirectMeterEntry(
        table_entry=red, config=p4runtime_pb2.MeterConfig(cir=0, cburst=0, pir=0, pburst=0)))
    add = 10 if "+ 10" in decl else 0
    for now, k, want in ((100, 1, 2), (200, 2, 0), (300, 1, 2), (400, 3, 0x63), (500, 2, 0)):
        (item,) = ingress_items(rig.pipeline, bytes([k, 0x63]), fast, 1, now)
        frames = egress_item(rig.pipeline, item, fast, now)[0]
        # a miss (k = 3) runs NoAction: the header keeps what it came with
        assert frames == [(2, bytes([k, want + add if k != 3 else want]))], (k, now)
