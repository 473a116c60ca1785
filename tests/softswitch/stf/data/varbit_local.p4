#include <core.p4>
#include <v1model.p4>
// Local varbit variables (in a control and in an action): they carry the current width with
// the value, so swapping two varbit fields of different widths swaps their lengths too.
header len_t { bit<8> l1; bit<8> l2; }
header v_t { varbit<32> v; }
struct H { len_t len; v_t a; v_t b; }
struct M { }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t sm) {
    state start {
        pk.extract(h.len);
        pk.extract(h.a, (bit<32>)h.len.l1);
        pk.extract(h.b, (bit<32>)h.len.l2);
        transition accept;
    }
}
control VC(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    varbit<32> t;
    action swap_in_action() {
        varbit<32> u;
        u = h.a.v;
        h.a.v = h.b.v;
        h.b.v = u;
    }
    apply {
        sm.egress_spec = 1;
        if (h.len.l1 == 8) {
            swap_in_action();
        } else {
            t = h.a.v;
            h.a.v = h.b.v;
            h.b.v = t;
        }
    }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pk, in H h) { apply { pk.emit(h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
