/* varbit: IPv4-style options sized by ihl, the two-argument extract, emit at the parsed width,
 * copying a varbit field, and a checksum over a list that includes it. */
#include <core.p4>
#include <v1model.p4>

header base_t { bit<4> ver; bit<4> ihl; bit<8> csum; }
header opts_t { varbit<320> options; }
header tail_t { bit<8> t; }
struct hs_t { base_t b; opts_t o; opts_t copy; tail_t tl; }
struct m_t { bit<8> r; }

parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start {
        p.extract(h.b);
        p.extract(h.o, (bit<32>) (((bit<16>) h.b.ihl) * 32));
        p.extract(h.tl);
        transition accept;
    }
}
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    apply {
        s.egress_spec = 1;
        if (s.parser_error == error.HeaderTooShort) { h.b.csum = 4; }
        if (s.parser_error == error.PacketTooShort) { h.b.csum = 1; }
        if (h.b.ver == 2) { h.copy.setValid(); h.copy.options = h.o.options; }
    }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs_t h, inout m_t m) {
    apply {
        bit<16> c = 0;
        hash(c, HashAlgorithm.csum16, 16w0, { h.b.ver, h.b.ihl, h.o.options, h.tl.t }, 17w65536);
        if (h.b.ver == 3) { h.b.csum = c[7:0]; }
    }
}
control D(packet_out p, in hs_t h) { apply { p.emit(h.b); p.emit(h.o); p.emit(h.copy); p.emit(h.tl); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
