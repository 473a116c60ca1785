"""Counter updates in the generated code add ``C.ncount`` (the packet's length plus one packet
in the packed cell, set once with ``C.nbytes`` for every packet, ingress and egress, on the
loop's path and the API's): indexed counters in ingress and egress and a direct counter count
every packet's own length, whatever path and order the packets take (2026-12-06: each update
added ``C.nbytes + 2**64`` itself, one big-int addition more per counter)."""
from __future__ import annotations

from exec_rig import Rig, through_api, through_loop

PROG = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> k; }
struct H { h_t h; }
struct M { }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(h.h); transition accept; }
}
control VC(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    counter(4, CounterType.packets_and_bytes) c_in;
    direct_counter(CounterType.packets_and_bytes) dc;
    action fwd() { sm.egress_spec = 2; }
    table t { key = { h.h.k : exact; } actions = { fwd; NoAction; } counters = dc; default_action = NoAction(); }
    apply { c_in.count(1); sm.egress_spec = 2; t.apply(); }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) {
    counter(4, CounterType.packets_and_bytes) c_eg;
    apply { c_eg.count(3); }
}
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pk, in H h) { apply { pk.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
"""


def test_counters_count_each_packet_s_length_on_both_paths(tmp_path):
    src = tmp_path / "cnt.p4"
    src.write_text(PROG)
    rig = Rig(src)
    assert rig.pipeline.blocks.source.count("+= C.ncount") >= 3  # two indexed, the direct one (twice: apply, table function)
    te = rig.entry("t", {"h.h.k": ("exact", 5)}, rig.action("fwd"))
    sizes = [(through_loop, 20), (through_api, 33), (through_loop, 1500), (through_loop, 7),
             (through_api, 64), (through_loop, 20)]
    for through, n in sizes:
        assert through(rig.pipeline, b"\x05" + bytes(n - 1)) == b"\x05" + bytes(n - 1)
    through_loop(rig.pipeline, b"\x06" + bytes(99))  # a miss: no direct count
    total = sum(n for _, n in sizes)
    c_in, c_eg = rig.state.counter("I.c_in"), rig.state.counter("E.c_eg")
    assert (c_in.packets[1], c_in.bytes[1]) == (len(sizes) + 1, total + 100)
    assert (c_eg.packets[3], c_eg.bytes[3]) == (len(sizes) + 1, total + 100)
    assert c_in.packets[0] == c_in.bytes[0] == c_eg.packets[2] == 0
    assert rig.state.table("I.t").find(te).counter == [total, len(sizes)]
