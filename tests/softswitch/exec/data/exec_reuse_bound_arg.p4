/* h is written only through an inout argument bound in a table's actions list; a packet whose
 * entry misses must read h.a as 0 (h is never extracted here), whatever the packet before it did. */
#include <core.p4>
#include <v1model.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header h_t { bit<8> a; bit<8> b; }
struct headers_t { eth_t eth; h_t h; }
struct meta_t { bit<8> x; }
parser P(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.eth); transition select(hdr.eth.type) { 0x1234: ph; default: accept; } }
    state ph { pk.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control I(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    action set_a(inout bit<8> a, bit<8> v) { a = v; }
    table t {
        key = { hdr.eth.src: exact; }
        actions = { set_a(hdr.h.a); NoAction; }
        default_action = NoAction();
    }
    apply {
        t.apply();
        hdr.eth.dst[7:0] = hdr.h.a;
        if (hdr.h.a == 0x77) { sm.egress_spec = 2; } else { sm.egress_spec = 1; }
    }
}
control E(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pk, in headers_t hdr) { apply { pk.emit(hdr.eth); pk.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
