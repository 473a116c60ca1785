// No table, no extern instance, no action parameter and no extern function call in a control:
// p4c's P4Info then has no type_info at all (p4c's issue2498-bmv2 sample), where softswitch
// wrote an empty one (tests/softswitch/p4info/test_p4info_order.py).
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
struct H { h_t h; }
struct M { }
parser P(packet_in p, out H h, inout M m, inout standard_metadata_t s) {
    state start { p.extract(h.h); transition accept; }
}
control V(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t s) {
    action set_low(inout bit<1> b) { b = 1; }
    apply { set_low(h.h.a[0:0]); s.egress_spec = 9w1; }
}
control E(inout H h, inout M m, inout standard_metadata_t s) { apply { } }
control C(inout H h, inout M m) { apply { } }
control D(packet_out p, in H h) { apply { p.emit(h.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
