/* Header stacks: a parse loop over an MPLS-like label stack (bottom-of-stack bit ends it),
 * push_front/pop_front in ingress, StackOutOfBounds when the stack overflows; lookahead/advance. */
#include <core.p4>
#include <v1model.p4>
#include "common.p4"

#define OP_PUSH 1
#define OP_POP 2
#define OP_SET1 3

header op_t { bit<8> op; bit<8> depth; bit<8> err; bit<8> valid_mask; bit<32> label_in; }
header label_t { bit<20> label; bit<3> tc; bit<1> bos; bit<8> ttl; }

struct headers_t { ethernet_t eth; op_t op; label_t[4] labels; }
struct meta_t { bit<8> depth; }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.eth);
        transition select(h.eth.ether_type) { ETHERTYPE_TEST: op; default: accept; }
    }
    state op {
        pkt.extract(h.op);
        m.depth = 0;
        transition select(h.op.depth) { 0: accept; 0xAD: skip; default: labels; }
    }
    state skip {                                  /* lookahead, then drop 4 bytes from the packet */
        h.op.label_in = pkt.lookahead<bit<32>>();
        pkt.advance(32);
        transition accept;
    }
    state labels {
        pkt.extract(h.labels.next);
        m.depth = m.depth + 1;
        transition select(h.labels.last.bos) { 1: accept; default: labels; }
    }
}

control VC(inout headers_t h, inout meta_t m) { apply { } }

control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 2;
        if (!h.op.isValid()) { mark_to_drop(sm); return; }
        if (sm.parser_error == error.StackOutOfBounds) { h.op.err = 1; }
        if (h.op.depth != 0xAD) { h.op.depth = m.depth; }
        if (h.op.op == OP_PUSH) {
            h.labels.push_front(1);
            h.labels[0].setValid();
            h.labels[0].label = h.op.label_in[19:0];
            h.labels[0].tc = 0;
            h.labels[0].bos = 0;
            h.labels[0].ttl = 64;
        } else if (h.op.op == OP_POP) {
            h.labels.pop_front(1);
        } else if (h.op.op == OP_SET1) {
            h.labels[1].label = h.op.label_in[19:0];   /* constant index */
        }
        bit<8> mask = 0;
        if (h.labels[0].isValid()) { mask = mask | 1; }
        if (h.labels[1].isValid()) { mask = mask | 2; }
        if (h.labels[2].isValid()) { mask = mask | 4; }
        if (h.labels[3].isValid()) { mask = mask | 8; }
        h.op.valid_mask = mask;
    }
}

control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }

control D(packet_out pkt, in headers_t h) {
    apply { pkt.emit(h.eth); pkt.emit(h.op); pkt.emit(h.labels); }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
