#include <core.p4>
#include <v1model.p4>
header a_t { int<8> s; }
struct hs_t { a_t a; }
struct m_t { bit<8> z; }
parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start { p.extract(h.a); transition accept; } }
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    action set(bit<9> port) { s.egress_spec = port; }
    table t { key = { h.a.s: range; } actions = { set; } default_action = set(1);
        const entries = { -2 .. 2 : set(2); } }
    apply { t.apply(); }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.a); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
