#include <core.p4>
#include <v1model.p4>
// An indirect packet meter configured from the STF script: its colour is written into the low
// byte of the source MAC (0 GREEN, 1 YELLOW, 2 RED).
header eth_t { bit<48> dst; bit<48> src; bit<16> etype; }
struct H { eth_t eth; }
struct M { }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(h.eth); transition accept; }
}
control VC(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    meter(4, MeterType.packets) m;
    apply {
        bit<2> colour;
        m.execute_meter((bit<32>) h.eth.etype[1:0], colour);
        h.eth.src[7:0] = (bit<8>) colour;
        sm.egress_spec = 1;
    }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pk, in H h) { apply { pk.emit(h.eth); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
