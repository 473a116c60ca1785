// Declarations nothing uses, and what p4c's front end does with them before it writes P4Info
// (RemoveUnusedDeclarations, ConstantFolding, SimplifyParsers): tests/softswitch/p4info/test_p4info_unused.py
#include <core.p4>
#include <v1model.p4>

#define DEBUG 0

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
@controller_header("packet_in") header pin_t { bit<9> port; bit<7> pad; }  // listed: types stay
struct h_t { eth_t eth; }
struct m_t { bit<8> x; bit<8> colour; }
struct learn_t { bit<8> x; }
struct gone_t { bit<8> x; }

parser P(packet_in p, out h_t h, inout m_t m, inout standard_metadata_t s) {
    value_set<bit<16>>(4) used_vs;
    value_set<bit<16>>(4) unused_vs;       // removed: nothing names it
    value_set<bit<16>>(4) unreachable_vs;  // removed: only a state start cannot reach names it
    state start {
        p.extract(h.eth);
        transition select(h.eth.type) { used_vs: accept; default: accept; }
    }
    state island { transition select(h.eth.type) { unreachable_vs: accept; default: reject; } }
}

action top_used() { }
action top_only_unused() { }  // only the removed table lists it: removed

control I(inout h_t h, inout m_t m, inout standard_metadata_t s) {
    direct_counter(CounterType.packets) dc_gone;      // its table is removed: not listed
    direct_meter<bit<8>>(MeterType.packets) dm_gone;  // likewise
    counter(8, CounterType.packets) c_never;          // extern instances stay, used or not
    meter(8, MeterType.packets) m_never;
    register<bit<8>>(8) r_never;
    action_profile(32) ap_gone_table;                 // listed, with no table
    action_profile(32) ap_never;
    action a_used(bit<9> p) { s.egress_spec = p; digest<learn_t>(1, {m.x}); }
    action a_only_unused(bit<9> p) { s.egress_spec = p; digest<gone_t>(1, {m.x}); }
    action a_metered() { dm_gone.read(m.colour); }
    action a_never() { }
    action a_direct() { }
    action a_debug() { }
    table used { key = { m.x : exact; } actions = { a_used; top_used; } }
    table unused { key = { m.x : exact; } actions = { a_only_unused; top_only_unused; a_metered; a_used; }
                   counters = dc_gone; meters = dm_gone; }
    table unused_ap { key = { m.x : exact; } actions = { a_used; } implementation = ap_gone_table; }
    table debug { key = { m.x : exact; } actions = { a_debug; } }
    apply {
        used.apply();
        a_direct();
        if (DEBUG == 1) {  // folded away, as p4c's ConstantFolding does: 'debug' and a_debug go
            debug.apply();
            a_debug();
        }
    }
}
control E(inout h_t h, inout m_t m, inout standard_metadata_t s) {
    table used { key = { m.x : exact; } actions = { NoAction; } }  // removed: so I.used's alias is 'used'
    apply { }
}
control V(inout h_t h, inout m_t m) { apply { } }
control C(inout h_t h, inout m_t m) { apply { } }
control D(packet_out p, in h_t h) { apply { p.emit(h.eth); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
