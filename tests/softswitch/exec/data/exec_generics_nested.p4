// Generic functions called from a parser state and nested in their own arguments (test_exec_generics.py).
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<16> c; } struct hs_t { h_t h; } struct m_t { bit<8> x; }
T id<T>(in T x) { return x; }
void bump<T>(inout T x, in T by) { x = x + by; }
parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start { p.extract(h.h); m.x = id(h.h.a); bump(m.x, 8w2); transition accept; } }
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply {
  s.egress_spec = 1; h.h.a = id(id(m.x)) + id(h.h.a); bump(h.h.c, (bit<16>)h.h.a); } }
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
