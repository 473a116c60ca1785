/* Named arguments (actions, functions, single-argument built-ins) and extract<T>(_). */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; } struct hs_t { h_t h; h_t g; } struct m_t { bit<8> x; }
bit<8> sub8(bit<8> x, bit<8> y) { return x - y; }
parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start { p.extract(hdr = h.h); p.extract<h_t>(_); transition accept; } }
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    action a(bit<8> v, bit<8> w) { h.h.b = v - w; }
    apply { s.egress_spec = 1; h.h.a = sub8(y = 1, x = 10); a(w = 2, v = 7); }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(hdr = h.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
