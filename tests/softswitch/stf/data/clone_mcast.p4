#include <core.p4>
#include <v1model.p4>
// Ingress: etype 1 -> multicast group 7; etype 2 -> unicast to port 2 and an I2E clone to
// session 5; etype 3 -> counts in a register (index 0) and writes the old count into src.
header eth_t { bit<48> dst; bit<48> src; bit<16> etype; }
struct H { eth_t eth; }
struct M { }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(h.eth); transition accept; }
}
control VC(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    register<bit<48>>(4) seen;
    apply {
        if (h.eth.etype == 1) {
            sm.mcast_grp = 7;
        } else if (h.eth.etype == 2) {
            sm.egress_spec = 2;
            clone(CloneType.I2E, 5);
        } else {
            bit<48> n;
            seen.read(n, 0);
            h.eth.src = n;
            seen.write(0, n + 1);
            sm.egress_spec = 3;
        }
    }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) {
    apply { h.eth.dst = (bit<48>) sm.egress_rid; }
}
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pk, in H h) { apply { pk.emit(h.eth); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
