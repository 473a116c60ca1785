#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
struct H { h_t[3] st; }
struct M { }
parser P(packet_in pkt, out H h, inout M m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.st.next);
        transition select(h.st.last.a) { 0: start; default: accept; }
    }
}
control VC(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t sm) { apply { sm.egress_spec = 1; } }
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pkt, in H h) { apply { pkt.emit(h.st); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
