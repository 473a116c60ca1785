/* Parser forms p4c accepts: a state without a transition (P4_16: it goes to reject) and direct
 * application of a parser type from a parser state (an instance of its own at each call). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header op_t { bit<8> op; bit<8> a; bit<8> b; bit<8> r; }
header x_t { bit<8> v; }
struct headers_t { ethernet_t eth; op_t op; x_t x; x_t y; }
struct meta_t { bit<8> n; }

parser Inner(packet_in pkt, out x_t x, inout bit<8> n) {
    state start {
        pkt.extract(x);
        n = n + x.v;
        transition accept;
    }
}

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.eth);
        transition select(h.eth.ether_type) { 0x9000: op; default: accept; }
    }
    state op {
        pkt.extract(h.op);
        transition select(h.op.op) { 1: dead_end; 2: sub; default: accept; }
    }
    state dead_end {
        pkt.extract(h.x);
    }
    state sub {
        m.n = 1;
        Inner.apply(pkt, h.x, m.n);
        Inner.apply(pkt, h.y, m.n);
        transition accept;
    }
}

control VC(inout headers_t h, inout meta_t m) { apply { } }

control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        if (sm.parser_error == error.NoError) { h.op.a = 0xE0; } else { h.op.a = 0xEE; }
        h.op.b = h.y.isValid() ? 8w1 : 8w0;
        h.op.r = m.n;
        sm.egress_spec = 1;
    }
}

control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
