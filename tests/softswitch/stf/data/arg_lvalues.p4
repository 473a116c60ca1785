#include <core.p4>
#include <v1model.p4>
// Out/inout arguments whose stack index changes before the copy-out: p4c saves the index when the
// argument is evaluated (sideEffects.cpp, DoSimplifyExpressions::preorder(ArrayIndex) in an
// Argument), as the P4_16 spec's calling convention saves the l-value; the copy-out goes there.
header h_t { bit<8> a; bit<8> b; bit<8> k; bit<8> j; }
header s_t { bit<8> v; }
struct H { h_t h; s_t[2] s; s_t[2] t; s_t[2] u; }
struct M { }
bit<8> inc(inout bit<8> x) { x = x + 1; return x; }
void f(inout bit<8> i, inout bit<8> v) { i = 1; v = 0x77; }
void g(inout bit<8> v, in bit<8> x) { v = 0x66; }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(h.h); pk.extract(h.s[0]); pk.extract(h.s[1]); pk.extract(h.t[0]);
                  pk.extract(h.t[1]); pk.extract(h.u[0]); pk.extract(h.u[1]); transition accept; }
}
control VC(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    action act(inout bit<8> i, inout bit<8> v) { i = 1; v = 0x55; }
    apply {
        sm.egress_spec = 1;
        f(h.h.b, h.s[h.h.b[0:0]].v);           // the callee changes the index: s[0]
        g(h.t[h.h.k[0:0]].v, inc(h.h.k));      // a later argument changes it: t[0]
        act(h.h.j, h.u[h.h.j[0:0]].v);         // an action, likewise: u[0]
    }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pk, in H h) { apply { pk.emit(h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
