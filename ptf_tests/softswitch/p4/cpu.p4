/* Controller I/O: PacketIn with metadata (ingress port, reason), PacketOut whose header picks
 * the egress port, and a learning digest of (source MAC, ingress port). */
#include <core.p4>
#include <v1model.p4>
#include "common.p4"

#define CPU_PORT 255
#define OP_FWD_NONE 0
#define OP_PUNT 1
#define OP_LEARN 2
#define REASON_PUNT 7

@controller_header("packet_in")
header packet_in_t { bit<9> ingress_port; bit<7> _pad; bit<8> reason; }
@controller_header("packet_out")
header packet_out_t { bit<9> egress_port; bit<7> _pad; }

header c_t { bit<8> op; bit<8> from_cpu; bit<16> pad; }
struct headers_t { packet_in_t packet_in; packet_out_t packet_out; ethernet_t eth; c_t c; }
struct learn_t { bit<48> src; bit<9> port; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        transition select(sm.ingress_port) { CPU_PORT: parse_packet_out; default: eth; }
    }
    state parse_packet_out { pkt.extract(h.packet_out); transition eth; }
    state eth {
        pkt.extract(h.eth);
        transition select(h.eth.ether_type) { ETHERTYPE_TEST: c; default: accept; }
    }
    state c { pkt.extract(h.c); transition accept; }
}

control VC(inout headers_t h, inout meta_t m) { apply { } }

control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        if (h.packet_out.isValid()) {
            sm.egress_spec = h.packet_out.egress_port;
            h.packet_out.setInvalid();
            if (h.c.isValid()) { h.c.from_cpu = 1; }
            return;
        }
        if (!h.c.isValid()) { mark_to_drop(sm); return; }
        if (h.c.op == OP_PUNT) {
            sm.egress_spec = CPU_PORT;
            h.packet_in.setValid();
            h.packet_in.ingress_port = sm.ingress_port;
            h.packet_in._pad = 0;
            h.packet_in.reason = REASON_PUNT;
        } else if (h.c.op == OP_LEARN) {
            digest<learn_t>(1, { h.eth.src, sm.ingress_port });
            sm.egress_spec = 2;
        } else {
            mark_to_drop(sm);
        }
    }
}

control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) {
    apply { pkt.emit(h.packet_in); pkt.emit(h.eth); pkt.emit(h.c); }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
