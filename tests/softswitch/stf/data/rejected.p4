#include <core.p4>
#include <v1model.p4>
// Uses a construct softswitch rejects by name, for the runner's "rejected" status.
header eth_t { bit<48> dst; bit<48> src; bit<16> etype; }
struct H { eth_t eth; }
struct M { }
extern bit<16> bump(in bit<16> x);
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(h.eth); transition accept; }
}
control VC(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    apply { h.eth.etype = bump(h.eth.etype); }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pk, in H h) { apply { pk.emit(h.eth); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
