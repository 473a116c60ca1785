// A default_action on a table implemented with an action profile: p4c's bmv2 back end leaves it out
// (and warns), so a miss runs no action; the table's hit path and the P4Info are unaffected.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> key; bit<8> val; bit<8> hit; }
struct hs_t { h_t h; }
struct m_t { bit<8> x; }

parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start { p.extract(h.h); transition accept; }
}
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    action put(bit<8> v) { h.h.val = v; }
    action_profile(16) prof;
    table t {
        key = { h.h.key: exact; }
        actions = { put; }
        implementation = prof;
        default_action = put(0x99);
    }
    apply {
        s.egress_spec = 2;
        if (t.apply().hit) { h.h.hit = 1; }
    }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
