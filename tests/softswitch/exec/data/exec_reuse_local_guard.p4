/* A store into the packet's h guarded by the validity of a local's h (a different object). */
#include <core.p4>
#include <v1model.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header h_t { bit<8> a; bit<8> b; }
struct headers_t { eth_t eth; h_t h; }
struct meta_t { bit<8> x; }
parser P(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.eth); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control I(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        headers_t copy;
        copy.h.setValid();
        if (hdr.eth.src[7:0] == 1) {
            if (copy.h.isValid()) { hdr.h.a = 0x55; }
        }
        hdr.eth.dst[7:0] = hdr.h.a;
        sm.egress_spec = 1;
    }
}
control E(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr.eth); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
