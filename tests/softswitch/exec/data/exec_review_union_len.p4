// From a review of the 2026-12-05 changes (tests: test_exec_review_fixes.py).
#include <core.p4>
#include <v1model.p4>
header a_t { bit<32> x; }
header b_t { bit<64> y; }
header_union u_t { a_t a; b_t b; }
header o_t { bit<32> plen; }
struct hs_t { u_t u; o_t o; }
struct m_t { bit<8> x; }
parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start { p.extract(h.u.a); transition accept; } }
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    apply { s.egress_spec = 1; h.u.b.setValid(); }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    apply { h.o.setValid(); h.o.plen = s.packet_length; } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.o); p.emit(h.u); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
