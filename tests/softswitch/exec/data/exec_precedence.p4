// P4_16 operator precedence (the spec's grammar, p4c's p4parser.ypp), where it differs from C:
// ++ binds like + (tighter than << and >>), and & ^ | bind tighter than comparisons.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<16> c; bit<16> d; bit<16> e; bit<8> f; bit<8> g; bit<8> k; }
struct hs_t { h_t h; }
struct m_t { }
parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t sm) {
    state start { p.extract(h.h); transition accept; } }
control VC(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t sm) {
    apply {
        h.h.c = h.h.a ++ h.h.b << 1;                  // (a ++ b) << 1
        h.h.d = h.h.a ++ h.h.b + 1;                   // (a ++ b) + 1
        h.h.e = 16w0x0f00 | h.h.a ++ h.h.b & 16w0xff; // 0x0f00 | ((a ++ b) & 0xff)
        bool z = h.h.f & 8w1 == 8w0;                  // (f & 1) == 0
        bool y = h.h.f ^ 8w3 != h.h.f | 8w1;          // (f ^ 3) != (f | 1)
        bool x = h.h.f & 8w0xf0 < 8w0x10;             // (f & 0xf0) < 0x10
        h.h.g = (bit<1>)z ++ (bit<1>)y ++ (bit<1>)x ++ 5w0;       // casts bind tighter than ++
        h.h.k = h.h.a + h.h.b >> 1;                   // (a + b) >> 1, as in C
        sm.egress_spec = 1;
    }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
