/* User functions (issue 16): values, early returns, inout parameters, locals, calls from a
 * parser state, an action and an apply block, and in conditions. */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> r; bit<8> s; }
struct hs_t { h_t h; } struct m_t { bit<8> x; }
bit<8> add3(in bit<8> x, bit<8> y, bit<8> z) { return x + y + z; }
bit<8> maxb(bit<8> x, bit<8> y) { if (x > y) { return x; } return y; }
void swap(inout bit<8> x, inout bit<8> y) { bit<8> t = x; x = y; y = t; }
bool big(in bit<8> v) { bit<8> lim = 100; return v > lim; }
bit<8> count_and(inout bit<8> c, bit<8> v) { c = c + 1; return v; }
parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start { p.extract(h.h); m.x = add3(h.h.a, 1, 2); transition accept; }
}
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    action act_fn() { h.h.s = maxb(h.h.a, h.h.b) + 1; }
    apply {
        s.egress_spec = 1;
        h.h.r = maxb(h.h.a, h.h.b) + add3(1, 1, 1);
        if (big(h.h.a)) { swap(h.h.a, h.h.b); }
        act_fn();
        bit<8> c = 0;
        bit<8> v = count_and(c, 5);
        h.h.s = h.h.s + v + c + m.x;   // the call ran first: c is 1 here
    }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
