// From a review of the 2026-12-05 changes (tests: test_exec_review_fixes.py).
#include <core.p4>
#include <v1model.p4>
header v_t { bit<8> len; varbit<64> opt; }
header o_t { bit<32> plen; }
struct hs_t { v_t v; o_t o; }
struct m_t { bit<8> x; }
parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start { p.extract(h.v, (bit<32>)(8 * (bit<32>)p.lookahead<bit<8>>())); transition accept; } }
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    apply { s.egress_spec = 1; h.v.setInvalid(); }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    apply { h.o.setValid(); h.o.plen = s.packet_length; } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.o); p.emit(h.v); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
