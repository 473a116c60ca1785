/* P4Runtime idle timeout: `mac` (exact on the destination MAC, support_timeout = true, a direct
 * counter) ages its entries; `plain` has no idle timeout.  Packet: an Ethernet header. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
struct hs_t { eth_t eth; }
struct m_t { bit<8> unused; }

parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t sm) {
    state start { p.extract(h.eth); transition accept; }
}
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t sm) {
    direct_counter(CounterType.packets_and_bytes) mac_hits;
    action fwd(bit<9> port) { sm.egress_spec = port; mac_hits.count(); }
    action drop() { mark_to_drop(sm); }
    table mac {
        key = { h.eth.dst: exact; }
        actions = { fwd; drop; }
        default_action = drop();
        support_timeout = true;
        counters = mac_hits;
    }
    action set_type(bit<16> t) { h.eth.type = t; }
    table plain {
        key = { h.eth.src: exact; }
        actions = { set_type; NoAction; }
        default_action = NoAction();
    }
    apply { mac.apply(); plain.apply(); }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t sm) { apply { } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.eth); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
