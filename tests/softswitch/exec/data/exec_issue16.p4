/* Issue 16's two silent misruns: @priority on const entries of a ternary table (bmv2: the
 * smallest number wins) and exit inside an action (out/inout arguments are still copied out). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header op_t { bit<8> op; bit<8> a; bit<8> b; bit<8> r; }
struct headers_t { ethernet_t eth; op_t op; }
struct meta_t { bit<8> acc; }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.eth);
        transition select(h.eth.ether_type) { 0x9000: op; default: accept; }
    }
    state op { pkt.extract(h.op); transition accept; }
}

control VC(inout headers_t h, inout meta_t m) { apply { } }

control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    action set_r(bit<8> v) { h.op.r = v; }
    // annotated out of textual order: the entry with @priority(1) must win over the earlier ones
    table t_prio {
        key = { h.op.a: ternary; }
        actions = { set_r; NoAction; }
        const entries = {
            @priority(30) 0x10 &&& 0xF0 : set_r(30);
            @priority(20) 0x11 &&& 0xFF : set_r(20);
            @priority(1)  0x00 &&& 0x00 : set_r(1);
        }
        default_action = NoAction();
    }
    // mixed: unannotated entries keep their position (1, 2, 3) as bmv2 priority
    table t_mixed {
        key = { h.op.a: ternary; }
        actions = { set_r; NoAction; }
        const entries = {
            0x20 &&& 0xF0 : set_r(1);       // priority 1
            @priority(5) 0x21 &&& 0xFF : set_r(5);
            0x22 &&& 0xFF : set_r(3);       // priority 3: wins over the first entry? no, 1 < 3
            @priority(0) 0x23 &&& 0xFF : set_r(0);
        }
        default_action = NoAction();
    }
    // no annotation at all: textual order
    table t_plain {
        key = { h.op.a: ternary; }
        actions = { set_r; NoAction; }
        const entries = {
            0x30 &&& 0xF0 : set_r(0x30);
            0x31 &&& 0xFF : set_r(0x31);
        }
        default_action = NoAction();
    }

    action bump_exit(inout bit<8> x, out bit<8> y) {
        x = x + 1;
        y = 0x55;
        if (h.op.b == 1) { exit; }
        x = x + 100;
    }
    action outer(inout bit<8> z) {
        bit<8> unused;
        bump_exit(z, unused);
        z = z + 50;
    }

    apply {
        sm.egress_spec = 1;
        if (!h.op.isValid()) { return; }
        if (h.op.op == 1) { t_prio.apply(); }
        if (h.op.op == 2) { t_mixed.apply(); }
        if (h.op.op == 3) { t_plain.apply(); }
        if (h.op.op == 4) {
            // exit inside the action: h.op.r = a + 1 and m.acc = 0x55 must both be copied out
            bump_exit(h.op.r, m.acc);
            h.op.r = 0xEE;
        }
        if (h.op.op == 5) { outer(h.op.r); h.op.r = 0xEE; }
        if (h.op.op == 7) {
            // resubmit: the second pass starts from reset standard_metadata, as on bmv2
            if (sm.instance_type == 6) {
                h.op.r = (bit<8>) sm.ingress_port;
                h.op.b = (bit<8>) sm.ingress_global_timestamp;
            } else {
                resubmit_preserving_field_list(1);
            }
        }
        if (h.op.op == 6) { h.op.r = h.op.a; bump_exit(h.op.r, m.acc); h.op.b = m.acc; }
    }
}

control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply { if (h.op.isValid() && h.op.op == 4) { h.op.b = m.acc; } }
}
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.eth); pkt.emit(h.op); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
