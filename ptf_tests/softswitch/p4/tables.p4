/* Match kinds and action profiles: exact, LPM, ternary and range (with priorities), optional,
 * an action profile (shared members) and an action selector (hash over the flow field). */
#include <core.p4>
#include <v1model.p4>
#include "common.p4"

header t_t {
    bit<32> addr; bit<16> port; bit<8> proto; bit<8> opt;
    bit<8> r_exact; bit<8> r_lpm; bit<8> r_tern; bit<8> r_range; bit<8> r_opt; bit<8> r_prof;
    bit<8> r_sel; bit<8> pad; bit<32> flow;
}
struct headers_t { ethernet_t eth; t_t t; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.eth);
        transition select(h.eth.ether_type) { ETHERTYPE_TEST: t; default: accept; }
    }
    state t { pkt.extract(h.t); transition accept; }
}

control VC(inout headers_t h, inout meta_t m) { apply { } }

control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    action_profile(32w64) prof;
    action_selector(HashAlgorithm.crc16, 32w64, 32w16) sel;

    action set_exact(bit<8> v) { h.t.r_exact = v; }
    action set_lpm(bit<8> v) { h.t.r_lpm = v; }
    action set_tern(bit<8> v) { h.t.r_tern = v; }
    action set_range(bit<8> v) { h.t.r_range = v; }
    action set_opt(bit<8> v) { h.t.r_opt = v; }
    action set_prof(bit<8> v) { h.t.r_prof = v; }
    action set_port(bit<9> port, bit<8> v) { sm.egress_spec = port; h.t.r_sel = v; }

    table t_exact { key = { h.t.addr: exact; } actions = { set_exact; NoAction; } default_action = NoAction(); }
    table t_lpm { key = { h.t.addr: lpm; } actions = { set_lpm; NoAction; } default_action = NoAction(); }
    table t_tern { key = { h.t.addr: ternary; h.t.port: ternary; } actions = { set_tern; NoAction; }
                   default_action = NoAction(); }
    table t_range { key = { h.t.port: range; } actions = { set_range; NoAction; } default_action = NoAction(); }
    table t_opt { key = { h.t.proto: optional; h.t.opt: optional; } actions = { set_opt; NoAction; }
                  default_action = NoAction(); }
    table t_prof { key = { h.t.proto: exact; } actions = { set_prof; NoAction; }
                   implementation = prof; }
    table t_sel { key = { h.t.opt: exact; h.t.flow: selector; } actions = { set_port; NoAction; }
                  implementation = sel; }

    apply {
        sm.egress_spec = 2;
        if (!h.t.isValid()) { mark_to_drop(sm); return; }
        t_exact.apply();
        t_lpm.apply();
        t_tern.apply();
        t_range.apply();
        t_opt.apply();
        t_prof.apply();
        t_sel.apply();
    }
}

control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.eth); pkt.emit(h.t); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
