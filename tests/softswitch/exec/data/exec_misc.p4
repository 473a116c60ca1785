/* Execution-core test program 2: stacks, lookahead/advance, switch statements, direct meters,
 * directional action parameters, signed arithmetic, local structs, log_msg/assert. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header lbl_t { bit<20> label; bit<3> tc; bit<1> bos; bit<8> ttl; }
header op_t { bit<8> op; bit<8> a; bit<8> b; bit<8> r; }
header peek_t { bit<8> first; bit<8> second; }

struct headers_t { ethernet_t eth; lbl_t[3] lbls; op_t op; }
struct pair_t { bit<8> x; bit<8> y; }
struct meta_t { bit<8> color; bit<8> peeked; pair_t p; bit<8> last_index; }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.eth);
        transition select(h.eth.ether_type) { 0x8847: lbls; 0x88b5: skip; 0x9000: op; default: accept; }
    }
    state lbls {
        pkt.extract(h.lbls.next);
        m.last_index = (bit<8>)h.lbls.lastIndex;  // lastIndex is a parser-only form (p4c)
        transition select(h.lbls.last.bos) { 1: op; default: lbls; }
    }
    state skip {
        m.peeked = pkt.lookahead<peek_t>().second;
        pkt.advance(16);
        transition op;
    }
    state op { pkt.extract(h.op); transition accept; }
}

control VC(inout headers_t h, inout meta_t m) { apply { } }

control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    direct_meter<bit<8>>(MeterType.packets) dm;

    action add_into(inout bit<8> acc, in bit<8> v) { acc = acc + v; }
    action set_color() { dm.read(m.color); sm.egress_spec = 2; }
    action other() { sm.egress_spec = 3; }
    table t_meter { key = { h.op.a: exact; } actions = { set_color; other; } default_action = other();
                    meters = dm; }
    table t_switch { key = { h.op.b: exact; } actions = { set_color; other; NoAction; }
                     default_action = NoAction(); }

    apply {
        sm.egress_spec = 1;
        if (h.lbls[0].isValid()) {
            h.op.r = m.last_index;
            if (h.op.op == 1) { h.lbls.push_front(1); h.lbls[0].setValid(); h.lbls[0].label = 99;
                                h.lbls[0].bos = 0; h.lbls[0].ttl = 7; }
            if (h.op.op == 2) { h.lbls.pop_front(1); }
            return;
        }
        if (!h.op.isValid()) { return; }
        switch (h.op.op) {
            10: { h.op.r = h.op.a |+| h.op.b; }
            11: { h.op.r = (bit<8>) ((int<8>) h.op.a >> 2); }
            12: { add_into(h.op.r, h.op.a); add_into(h.op.r, h.op.b); }
            13: { pair_t q = { h.op.a, h.op.b }; m.p = q; q.x = 0; h.op.r = m.p.x + q.x; }
            14: { t_meter.apply(); h.op.r = m.color; }
            15: {
                switch (t_switch.apply().action_run) {
                    set_color: { h.op.r = 1; }
                    other: { h.op.r = 2; }
                    default: { h.op.r = 3; }
                }
            }
            16: { h.op.r = m.peeked; }
            17: { log_msg("value {} and {}", { h.op.a, h.op.b }); h.op.r = 17; }
            18: { assert(h.op.a == 0); h.op.r = 18; }
            19: { h.eth.src = 0; h.op.r = (bit<8>) (h.eth == h.eth ? 8w1 : 8w0); }
            20: { if (h.op.a == 1 && t_switch.apply().hit) { h.op.r = 20; } else { h.op.r = 21; } }
            default: { h.op.r = 0xEE; }
        }
    }
}

control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) {
    apply { pkt.emit(h.eth); pkt.emit(h.lbls); pkt.emit(h.op); }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
