/* Extern instances constructed in a table property (p4c names each after the property's @name):
 * an action profile, an action selector and a direct counter of one table each. */
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
    table t_ap {
        key = { h.op.a: exact; }
        actions = { set_r; NoAction; }
        @name("ap") implementation = action_profile(32w16);
    }
    table t_sel {
        key = { h.op.a: exact; h.op.b: selector; }
        actions = { set_r; }
        @name(".ap_ws") @max_group_size(4)
        implementation = action_selector(HashAlgorithm.identity, 32w64, 32w8);
    }
    table t_cnt {
        key = { h.op.a: exact; }
        actions = { set_r; NoAction; }
        default_action = NoAction();
        @name("t_cnt_counter") counters = direct_counter(CounterType.packets_and_bytes);
    }
    apply {
        if (h.op.op == 1) { t_ap.apply(); }
        else if (h.op.op == 2) { t_sel.apply(); }
        else if (h.op.op == 3) { t_cnt.apply(); }
        sm.egress_spec = 1;
    }
}

control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
