// From a review of the 2026-12-05 changes (tests: test_exec_review_fixes.py).
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> k; bit<8> o; }
header g_t { bit<8> r; }
struct hs_t { h_t h; g_t g; }
struct m_t { bit<8> x; }
parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start { p.extract(h.h); p.extract(h.g); transition accept; } }
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    action set(bit<8> v) { h.g.r = v; }
    table t {
        key = { h.h.k[3:0] : exact; }
        actions = { set; NoAction; }
        default_action = set(0xEE);
    }
    apply {
        s.egress_spec = 1;
        h.h.setInvalid();
        t.apply();
    }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.h); p.emit(h.g); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
