/* exec_raw_emit.p4's h2 read only through the whole headers struct (copied, compared): every field
 * of it counts as read (usage.unread_fields), so extract must store them all. */
#include <core.p4>
#include <v1model.p4>

header h1_t { bit<8> op; bit<8> n; }
header h2_t { bit<16> a; bit<8> b; bit<8> c; }
struct hs_t { h1_t h1; h2_t h2; }
struct m_t { }

parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start { p.extract(h.h1); p.extract(h.h2); transition accept; }
}
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    apply {
        s.egress_spec = 2;
        hs_t other = h;
        other.h2.b = 5;
        other.h2.c = 6;
        if (h == other) { h.h1.n = 0x55; }  // h.h2.b == 5 and h.h2.c == 6, read through h itself
    }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.h1); p.emit(h.h2); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
