/* header_union: extract into one member (the others invalid), isValid() of the union, setValid()
 * on a member invalidates the others, assignment into a member, emit of the union. */
#include <core.p4>
#include <v1model.p4>

header kind_t { bit<8> k; }
header a_t { bit<8> x; bit<8> y; }
header b_t { bit<16> z; bit<8> w; }
header_union ab_t { a_t a; b_t b; }
struct hs_t { kind_t kind; ab_t u; }
struct m_t { bit<8> r; }

parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start {
        p.extract(h.kind);
        transition select(h.kind.k) { 1: pa; 2: pb; default: accept; }
    }
    state pa { p.extract(h.u.a); transition accept; }
    state pb { p.extract(h.u.b); transition accept; }
}
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    apply {
        s.egress_spec = 1;
        if (!h.u.isValid()) {
            h.u.a.setValid();          // nothing parsed: make an a_t
            h.u.a.x = 0xAA; h.u.a.y = 0xBB;
        } else if (h.u.a.isValid() && h.u.a.x == 9) {
            h.u.b.setValid();          // switch to b: a becomes invalid
            h.u.b.z = 0x1234; h.u.b.w = 0x56;
        } else if (h.u.b.isValid() && h.u.b.w == 7) {
            a_t n = { 1, 2 };
            h.u.a = n;                 // a valid header written into a: b becomes invalid
        }
        h.kind.k = (bit<8>) (h.u.a.isValid() ? 8w0xA : 8w0) | (bit<8>) (h.u.b.isValid() ? 8w0xB0 : 8w0);
    }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.kind); p.emit(h.u); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
