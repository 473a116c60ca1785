/* Top-level extern instances shared by ingress and egress, and names equal to type names. */
#include <core.p4>
#include <v1model.p4>

typedef bit<19> qdepth_t;
enum bit<8> Reason { NONE = 0, NO_ROUTE = 1, EGRESS_FULL = 2 }

@controller_header("packet_in")
header packet_in_t { bit<9> ingress_port; bit<7> _pad; }
header eth_t { bit<48> dst; bit<48> src; bit<16> type_; }
header packet_in_header { bit<8> x; }
/* fields named like types: a header type, an extern type and a header type of this program */
struct headers_t { packet_in_t packet_in; eth_t eth; packet_in_header packet_in_header; }
struct meta_t { Reason reason; bit<8> eth_t; bit<8> code; }

counter(8, CounterType.packets_and_bytes) drop_reasons;
@name("qdepth") register<qdepth_t>(4) egress_qdepth;
@id(0x12000077) counter(4, CounterType.packets) pinned;

action count_pinned() { pinned.count(1); }

parser P(packet_in packet, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { packet.extract(h.eth); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }

control Ig(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    table fwd {
        key = { h.eth.dst[7:0]: exact; }
        actions = { count_pinned; NoAction; }
    }
    apply {
        qdepth_t eth_t = 0;
        egress_qdepth.read(eth_t, 0);
        h.eth.src[18:0] = eth_t;
        m.eth_t = 3;
        if (m.code < Reason.EGRESS_FULL && h.eth.type_ != 0x88cc) {
            sm.egress_spec = 2;
        } else {
            m.reason = Reason.NO_ROUTE;
            drop_reasons.count((bit<32>)(bit<8>) m.reason);  // p4c casts a serializable enum to its own type only
            mark_to_drop(sm);
        }
        fwd.apply();
    }
}

control Eg(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        egress_qdepth.write(0, (qdepth_t) sm.egress_port + 5);
        m.reason = Reason.EGRESS_FULL;
        drop_reasons.count((bit<32>)(bit<8>)m.reason);
    }
}
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out packet, in headers_t h) { apply { packet.emit(h.eth); } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
