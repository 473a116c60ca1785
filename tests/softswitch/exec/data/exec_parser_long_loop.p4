// A parser loop that consumes one byte per pass: bmv2 runs it to the end of any packet.
#include <core.p4>
#include <v1model.p4>
header m_t { bit<8> v; }
header o_t { bit<8> err; bit<16> skipped; }
struct H { o_t o; m_t mk; }
struct M { bit<16> n; }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t sm) {
    state start { transition scan; }
    state scan {
        transition select(pk.lookahead<bit<8>>()) { 0xFF: found; default: skip; }
    }
    state skip { pk.advance(8); m.n = m.n + 1; transition scan; }
    state found { pk.extract(h.mk); transition accept; }
}
control VC(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 2;
        h.o.setValid();
        h.o.err = sm.parser_error == error.NoError ? 8w0 : 8w1;
        h.o.skipped = m.n;
        truncate(8);
    }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pk, in H h) { apply { pk.emit(h.o); pk.emit(h.mk); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
