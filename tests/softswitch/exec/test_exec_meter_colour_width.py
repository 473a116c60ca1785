"""A meter's colour written into a destination narrower than it: bmv2 cuts it to the field's
width (``Field::set`` through ``export_bytes``), so RED (2) in a ``bit<1>`` reads 0.  softswitch
wrote the 2 unmasked until 2026-12-05: a direct meter's ``read`` into ``bit<1>`` metadata took the
other branch of an ``if`` (a silent misrun), ``execute_meter`` into a ``bit<1>`` header field made
the deparser fail and the packet was dropped.  Both meters here are configured to rates of 0,
so every packet is RED."""
from __future__ import annotations

from exec_rig import Rig
from p4.v1 import p4runtime_pb2

HEAD = """
#include <core.p4>
#include <v1model.p4>
header a_t { bit<8> x; }
header o_t { bit<1> c1; bit<7> pad; bit<8> c8; bit<8> r; }
struct hs_t { a_t a; o_t o; }
struct m_t { bit<1> c; }
parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start { p.extract(h.a); transition accept; }
}
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    meter(4, MeterType.packets) m0;
    direct_meter<bit<1>>(MeterType.packets) dm;
    action setc() { dm.read(m.c); }
    table t { key = { h.a.x : exact; } actions = { setc; NoAction; } meters = dm; default_action = NoAction(); }
    apply {
        s.egress_spec = 2; h.o.setValid();
        m0.execute_meter(0, h.o.c1);
        m0.execute_meter(0, h.o.c8);
        t.apply();
        if (m.c == 0) { h.o.r = 0xAA; } else { h.o.r = 0xBB; }
    }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.a); p.emit(h.o); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""

RED_ALWAYS = p4runtime_pb2.MeterConfig(cir=0, cburst=0, pir=0, pburst=0)


def test_red_is_cut_to_the_destination_width(tmp_path):
    prog = tmp_path / "m.p4"
    prog.write_text(HEAD)
    r = Rig(prog)
    r.write(p4runtime_pb2.Update.MODIFY, meter_entry=p4runtime_pb2.MeterEntry(
        meter_id=r._id("meters", "I.m0"), index=p4runtime_pb2.Index(index=0), config=RED_ALWAYS))
    t = next(x for x in r.p4info.tables if x.preamble.name == "I.t")
    te = r.entry("I.t", {t.match_fields[0].name: ("exact", 1)}, r.action("I.setc"))
    r.write(p4runtime_pb2.Update.MODIFY, direct_meter_entry=p4runtime_pb2.DirectMeterEntry(
        table_entry=te, config=RED_ALWAYS))
    out = r.output(b"\x01", port=1)
    assert out[1] >> 7 == 0  # execute_meter: RED (2) in bit<1>
    assert out[2] == 2  # RED in bit<8>
    assert out[3] == 0xAA  # direct_meter.read: RED in bit<1> reads 0


def test_direct_meter_red_in_one_bit_takes_the_zero_branch(tmp_path):
    prog = tmp_path / "d.p4"
    prog.write_text(HEAD.replace("m0.execute_meter(0, h.o.c1);", "").replace("m0.execute_meter(0, h.o.c8);", ""))
    r = Rig(prog)
    t = next(x for x in r.p4info.tables if x.preamble.name == "I.t")
    te = r.entry("I.t", {t.match_fields[0].name: ("exact", 1)}, r.action("I.setc"))
    r.write(p4runtime_pb2.Update.MODIFY, direct_meter_entry=p4runtime_pb2.DirectMeterEntry(
        table_entry=te, config=RED_ALWAYS))
    assert r.output(b"\x01", port=1)[3] == 0xAA
    assert r.output(b"\x02", port=1)[3] == 0xAA  # a miss: the action does not run, m.c stays 0
