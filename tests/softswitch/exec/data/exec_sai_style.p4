/* Constructs of SONiC DASH's pipeline (p4c's dash-pipeline-v1model-bmv2 sample), each in a few
 * lines: structured annotations @Name[...] on tables, keys, actions, parameters and counters;
 * parameters with default values left out of a call; direct application of two control types;
 * a serializable-enum match field and action parameter. */
#include <core.p4>
#include <v1model.p4>

enum bit<8> mode_t { A = 1, B = 2, C = 4 }

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header op_t { bit<8> op; bit<8> a; bit<8> b; bit<8> r; }
struct headers_t { ethernet_t eth; op_t op; }
struct meta_t { mode_t mode; }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.eth);
        transition select(h.eth.ether_type) { 0x9000: op; default: accept; }
    }
    state op { pkt.extract(h.op); transition accept; }
}

control VC(inout headers_t h, inout meta_t m) { apply { } }

// v and md have default values: a call may leave them out
action or_mode(inout bit<8> r, in bit<8> v = 0x10, in mode_t md = mode_t.C) {
    r = v | md;
}

// declared in the opposite order of their use: P4Info lists them in the order of use
action g_nop2() { }
action g_nop1() { }
action g_y(inout bit<8> r) { r = r + 1; }
action g_z(inout bit<8> r) { r = r * 2; }

bit<8> add(in bit<8> x, in bit<8> y = 3) {
    return x + y;
}

control stage_a(inout headers_t h, inout meta_t m) {
    action set_a(bit<8> v) { h.op.b = v; }
    @SaiTable[name="stage_a_table", api="dash_a"]
    table ta {
        key = { h.op.a: exact @SaiVal[name="a"]; }
        actions = { set_a; NoAction; }
        default_action = NoAction();
    }
    apply { ta.apply(); }
}

control stage_b(inout headers_t h, inout meta_t m) {
    action set_b(bit<8> v) { h.op.r = v; }
    table tb {
        key = { h.op.a: exact; }
        actions = { set_b; NoAction; }
        default_action = NoAction();
    }
    apply { tb.apply(); }
}

control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    @SaiCounter[name="hits", attr_type="stats"] @Empty[]
    counter(4, CounterType.packets) hits;

    @Tags["x", 2, false]
    action set_r(@SaiVal[type="sai_uint8_t", default_value="SAI_ZERO"] bit<8> v) { h.op.r = v; }
    action set_mode(mode_t md) { h.op.r = (bit<8>)md; }

    @SaiTable[name="sa_rule", order=1, shift=-2, isobject=true, api="dash_acl"]
    table t_sa {
        key = { h.op.a: exact @SaiVal[name="a", type="sai_uint8_t"]; }
        actions = { set_r; @Tags["ref"] set_mode; }
        default_action = set_r(0xEE);
    }

    table t_mode {
        key = { m.mode: exact; }
        actions = { set_r; NoAction; }
        default_action = NoAction();
    }

    table t_order {
        key = { h.op.a: exact; }
        actions = { g_nop1; g_nop2; }
        default_action = g_nop1();
    }

    apply {
        hits.count(0);
        if (h.op.op == 1) {
            or_mode(r = h.op.r);                  // v and md left out: 0x10 | 4
        } else if (h.op.op == 2) {
            or_mode(h.op.r, h.op.a);              // trailing md left out: a | 4
        } else if (h.op.op == 3) {
            or_mode(md = mode_t.A, r = h.op.r);   // v left out: 0x10 | 1
        } else if (h.op.op == 4) {
            h.op.r = add(h.op.a);                 // y left out: a + 3
            h.op.b = add(y = 1, x = h.op.a);      // a + 1
        } else if (h.op.op == 5) {
            t_sa.apply();
        } else if (h.op.op == 6) {
            m.mode = (mode_t)h.op.a;
            t_mode.apply();
        } else if (h.op.op == 7) {
            stage_a.apply(h, m);
            stage_b.apply(h, m);
        } else if (h.op.op == 8) {
            t_order.apply();
            g_z(h.op.a);
            g_y(h.op.a);
        }
    }
}

control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.eth); pkt.emit(h.op); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
