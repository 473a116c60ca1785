/* Priority queues: standard_metadata.priority comes from the packet; egress copies the queue
 * metadata (enq_qdepth, deq_timedelta, enq_timestamp) into the packet so a test can see them. */
#include <core.p4>
#include <v1model.p4>
#include "common.p4"

header q_t { bit<8> prio; bit<8> seq; bit<8> out_prio; bit<8> pad; bit<32> enq_qdepth; bit<32> deq_timedelta;
             bit<32> enq_timestamp; }
struct headers_t { ethernet_t eth; q_t q; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.eth);
        transition select(h.eth.ether_type) { ETHERTYPE_TEST: q; default: accept; }
    }
    state q { pkt.extract(h.q); transition accept; }
}

control VC(inout headers_t h, inout meta_t m) { apply { } }

control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        if (!h.q.isValid()) { mark_to_drop(sm); return; }
        sm.priority = h.q.prio[2:0];
        sm.egress_spec = 4;
    }
}

control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.q.out_prio = (bit<8>) sm.priority;
        h.q.enq_qdepth = (bit<32>) sm.enq_qdepth;
        h.q.deq_timedelta = sm.deq_timedelta;
        h.q.enq_timestamp = sm.enq_timestamp;
    }
}

control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.eth); pkt.emit(h.q); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
