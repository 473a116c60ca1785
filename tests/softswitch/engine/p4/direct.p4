/* Engine test program for the loop's straight path: egress port from the last byte of the
 * destination MAC, priority from the last byte of the source MAC; egress drops ether type 0xdead.
 * The test writes a second version whose egress copies the queue depths into a trailer
 * (QUEUE_READ below), i.e. a program that reads what the traffic manager fills in. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header q_t { bit<32> enq_qdepth; bit<32> deq_qdepth; }
struct headers_t { ethernet_t eth; q_t q; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.eth); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = (bit<9>) h.eth.dst[7:0];
        sm.priority = h.eth.src[2:0];
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        if (h.eth.ether_type == 0xdead) { mark_to_drop(sm); }
        /* QUEUE_READ */
    }
}
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.eth); pkt.emit(h.q); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
