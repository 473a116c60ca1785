// From a review of the 2026-12-05 changes (tests: test_exec_review_fixes.py).
#include <core.p4>
#include <v1model.p4>
header e_t { bit<8> v; }
struct inner_t { e_t[3] s; }
struct hs_t { inner_t inr; }
struct m_t { bit<8> x; }
parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    inner_t tmp;
    state start {
        p.extract(tmp.s.next);          // tmp.s[0] = 1st byte, nextIndex 1
        h.inr = tmp;                     // struct copy inr a parser: p4c keeps h.inr.s = tmp.s (assign_header_stack copies nextIndex)
        p.extract(h.inr.s.next);         // bmv2: into h.inr.s[1]
        transition accept;
    }
}
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { s.egress_spec = 1; } }
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.inr.s); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
