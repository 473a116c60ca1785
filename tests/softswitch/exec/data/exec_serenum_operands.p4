// A serializable enum as an operand of arithmetic, ++, ordering, shifts and slices: p4c casts it to
// its underlying type (tests: test_exec_serenum_operands.py).
#include <core.p4>
#include <v1model.p4>
enum bit<8> K { A = 3, B = 200 }
header h_t { bit<8> a; bit<8> r; bit<16> w; bit<8> c; bit<8> s; bit<8> t; }
struct H { h_t h; }
struct M { K k; }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(h.h); transition accept; }
}
control VC(inout H h, inout M m) { apply {} }
control Ig(inout H h, inout M m, inout standard_metadata_t sm) {
    apply {
        m.k = (K)h.h.a;
        h.h.r = m.k + 1;
        h.h.w = m.k ++ h.h.a;
        h.h.c = (m.k < K.B) ? 8w1 : 8w0;
        h.h.s = m.k << 1;
        h.h.t = (bit<8>)m.k[3:0];
        sm.egress_spec = 1;
    }
}
control Eg(inout H h, inout M m, inout standard_metadata_t sm) { apply {} }
control CC(inout H h, inout M m) { apply {} }
control D(packet_out pk, in H h) { apply { pk.emit(h.h); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
