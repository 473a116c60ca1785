#include <core.p4>
#include <v1model.p4>
// Calls of functions with inout parameters inside list and struct initialisers: elements run
// in written order, so an element before the call reads the value from before it (taken into a
// temporary), one after it reads the value the call left.
header h_t { bit<8> v; bit<8> w; bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct H { h_t h; }
struct M { }
struct trio_t { bit<8> a; bit<8> b; bit<8> c; }
struct nest_t { trio_t t; bit<8> d; }

bit<8> bump(inout bit<8> x) {
    x = x + 1;
    return x + 0x10;
}

parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(h.h); transition accept; }
}
control VC(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    // at the control's top level, like p4c's issue2488, and nested
    nest_t n = { { h.h.v, bump(h.h.v), h.h.v }, 1 };
    tuple<bit<8>, bit<8>> t = { h.h.w, bump(h.h.w) };
    apply {
        sm.egress_spec = 1;
        if (h.h.d == 0) {
            h.h.a = n.t.a;   // v before the call
            h.h.b = n.t.b;   // the call's result
            h.h.c = n.t.c;   // v after the call
            h.h.d = n.d;
        } else {
            trio_t k = { c = h.h.w, b = bump(h.h.w), a = 9 };  // named: written order
            h.h.a = k.a;
            h.h.b = k.b;
            h.h.c = k.c;
        }
    }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pk, in H h) { apply { pk.emit(h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
