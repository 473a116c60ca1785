/* Engine end-to-end test program: forward by ingress port, priority from a table,
 * PacketIn/PacketOut through the CPU port (255). */
#include <core.p4>
#include <v1model.p4>

const bit<9> CPU_PORT = 255;

@controller_header("packet_in")
header packet_in_t { bit<9> ingress_port; bit<7> _pad; }
@controller_header("packet_out")
header packet_out_t { bit<9> egress_port; bit<7> _pad; }
header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }

struct headers_t { packet_out_t packet_out; packet_in_t packet_in; ethernet_t eth; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        transition select(sm.ingress_port) { CPU_PORT: parse_packet_out; default: parse_eth; }
    }
    state parse_packet_out { pkt.extract(h.packet_out); transition parse_eth; }
    state parse_eth { pkt.extract(h.eth); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    action drop() { mark_to_drop(sm); }
    action set_port(bit<9> port) { sm.egress_spec = port; }
    action to_cpu() {
        sm.egress_spec = CPU_PORT;
        h.packet_in.setValid();
        h.packet_in.ingress_port = sm.ingress_port;
    }
    table fwd {
        key = { sm.ingress_port: exact; }
        actions = { set_port; to_cpu; drop; }
        default_action = drop();
    }
    apply {
        if (h.packet_out.isValid()) {
            sm.egress_spec = h.packet_out.egress_port;
            h.packet_out.setInvalid();
        } else {
            fwd.apply();
        }
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) {
    apply { pkt.emit(h.packet_in); pkt.emit(h.eth); }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
