// verify_checksum as bmv2's Checksum::verify runs it: skipped while the checksum field's header is
// invalid (checked before the condition), and the computed value compared whole with the field.
// h.a.t == 1 extracts h.b (the checksum field); ALG is csum16 (default) or crc32 (-DALG=crc32).
#ifndef ALG
#define ALG csum16
#endif
#include <core.p4>
#include <v1model.p4>
header a_t { bit<8> t; bit<8> v; }
header b_t { bit<16> c; }
header o_t { bit<8> cerr; }
struct hs_t { a_t a; b_t b; o_t o; }
struct m_t { bit<8> z; }
parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start { p.extract(h.a); transition select(h.a.t) { 1: pb; default: accept; } }
    state pb { p.extract(h.b); transition accept; }
}
control V(inout hs_t h, inout m_t m) { apply { verify_checksum(true, {h.a.v}, h.b.c, HashAlgorithm.ALG); } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    apply { s.egress_spec = 2; h.o.setValid(); h.o.cerr = (bit<8>)s.checksum_error; }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.a); p.emit(h.b); p.emit(h.o); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
