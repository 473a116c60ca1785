/* Engine test program: every frame goes to port 3; egress writes the v1model timestamps and
 * queue metadata it sees into a trailer header, as telemetry would (hop latency = egress -
 * ingress global timestamp). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header stamp_t {
    bit<48> ingress_ts; bit<48> egress_ts; bit<32> enq_ts; bit<32> deq_timedelta;
    bit<32> hop_latency; bit<32> _pad;
}
struct headers_t { ethernet_t eth; stamp_t stamp; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.eth); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 3; }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.stamp.setValid();
        h.stamp.ingress_ts = sm.ingress_global_timestamp;
        h.stamp.egress_ts = sm.egress_global_timestamp;
        h.stamp.enq_ts = sm.enq_timestamp;
        h.stamp.deq_timedelta = sm.deq_timedelta;
        h.stamp.hop_latency = (bit<32>) (sm.egress_global_timestamp - sm.ingress_global_timestamp);
    }
}
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.eth); pkt.emit(h.stamp); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
