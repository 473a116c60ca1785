/* @hidden tables: p4c's P4RuntimeSerializer leaves them out of P4Info (and @hidden actions,
 * and the direct counter of a hidden table), but they run: const entries, default actions.
 * I.t is hidden and E.t is not: in p4c's symbol table both count for aliases, so E.t's alias
 * stays "E.t" (not "t"). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header op_t { bit<8> a; bit<8> b; bit<8> c; }
struct headers_t { ethernet_t eth; op_t op; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.eth); pkt.extract(h.op); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    direct_counter(CounterType.packets) hc;
    @hidden action set_b(bit<8> v) { h.op.b = v; }
    action set_c(bit<8> v) { h.op.c = v; }      // used only by the hidden table: p4c lists it
    action fwd(bit<9> port) { sm.egress_spec = port; }
    action drop() { mark_to_drop(sm); }
    @hidden table t {
        key = { h.op.a : exact; }
        actions = { set_b; set_c; }
        const entries = {
            1 : set_b(0x11);
            2 : set_c(0x22);
        }
        const default_action = set_b(0xee);
        counters = hc;
    }
    table fwd_t {
        key = { h.eth.ether_type : exact; }
        actions = { fwd; drop; }
        default_action = drop();
    }
    apply {
        t.apply();
        fwd_t.apply();
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    action nop() { }
    table t { actions = { nop; } default_action = nop(); }
    apply { t.apply(); }
}
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.eth); pkt.emit(h.op); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
