/* An @hidden action called directly from an apply block (ONOS fabric.p4's
 * egress_next.set_mpls/pop_mpls_if_present): it runs, and p4c leaves it out of P4Info (its mid
 * end wraps the call in a hidden table); a plain directly-called action is listed. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header op_t { bit<8> a; bit<8> b; }
struct headers_t { ethernet_t eth; op_t op; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.eth); pkt.extract(h.op); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    @hidden action mark_hidden() { h.op.a = 0xAA; }
    action mark_listed() { h.op.b = 0xBB; }
    apply {
        sm.egress_spec = 1;
        mark_hidden();
        mark_listed();
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.eth); pkt.emit(h.op); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
