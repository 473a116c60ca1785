#include <core.p4>
#include <v1model.p4>
// const entries of a ternary table with @priority written after the action (where p4c's own
// samples put it): the smallest number wins, an entry without one has its position.
header h_t { bit<16> t; bit<8> res; }
struct H { h_t h; }
struct M { }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(h.h); transition accept; }
}
control VC(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    action set(bit<8> v) { h.h.res = v; sm.egress_spec = 1; }
    table t {
        key = { h.h.t: ternary; }
        actions = { set; NoAction; }
        default_action = NoAction();
        const entries = {
            0x1111 &&& 0x000F : set(1) @priority(3);
            0x1181            : set(2);
            0x1181 &&& 0xF00F : set(3) @priority(1);
        }
    }
    apply { t.apply(); }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pk, in H h) { apply { pk.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
