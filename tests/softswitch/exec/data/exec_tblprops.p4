/* Table forms p4c accepts: an empty actions list, a selector key without an action selector,
 * and actions that share a name (p4c lists the name once; each table runs its own). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header op_t { bit<8> op; bit<8> a; bit<8> b; bit<8> r; }
struct headers_t { ethernet_t eth; op_t op; }
struct meta_t { }

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
    table t_empty {
        key = { h.op.a: exact; }
        actions = { }
    }
    table t_outer {
        key = { t_empty.apply().hit: exact @name("empty_hit"); }
        actions = { set_r; }
    }
    table t_nosel {
        key = { h.op.a: exact; h.op.b: selector; }
        actions = { set_r; }
    }
    @name("mark") action mark_a() { h.op.r = 0xA1; }
    action mark_b() { h.op.r = 0xB2; }
    @name("mark") action mark_unused(bit<8> x) { h.op.r = x; }
    table t_a {
        key = { h.op.a: exact; }
        actions = { mark_a; NoAction; }
        const entries = { 1 : mark_a(); }
        default_action = NoAction();
    }
    table t_b {
        key = { h.op.a: exact; }
        actions = { mark_b; NoAction; }
        default_action = mark_b();
    }
    apply {
        if (h.op.op == 1) {
            t_outer.apply();
        } else if (h.op.op == 2) {
            t_nosel.apply();
        } else if (h.op.op == 3) {
            t_a.apply();
        } else if (h.op.op == 4) {
            switch (t_b.apply().action_run) {
                mark_b: { h.op.b = 0xBB; }
                default: { }
            }
        }
        sm.egress_spec = 1;
    }
}

control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
