#include <core.p4>
#include <v1model.p4>
// Calls of functions with out/inout parameters inside larger expressions, in arguments of other
// calls and in table keys, evaluated as p4c's SideEffectOrdering/KeySideEffect passes evaluate
// them: left to right, each argument copied in when it is evaluated (earlier ones into
// temporaries), an inout argument copied out after its call.
header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<8> e; bit<8> f; bit<8> g; bit<8> k; }
header s_t { bit<8> v; }
struct H { h_t h; s_t[2] s; }
struct M { }

bit<8> inc(inout bit<8> x) { x = x + 1; return x; }
bit<8> add(in bit<8> x, in bit<8> y) { return x + y; }
bit<8> acc(inout bit<8> x, in bit<8> y) { x = x + y; return x; }
bit<8> twice(inout bit<8> x) { return inc(x) + inc(x); }

parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(h.h); pk.extract(h.s[0]); pk.extract(h.s[1]); transition accept; }
}
control VC(inout H h, inout M m) { apply { } }
control Sum(in bit<8> x, in bit<8> y, out bit<8> z) { apply { z = x + y; } }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    register<bit<8>>(4) r;
    Sum() sum;
    action put(inout bit<8> x, bit<8> y) { x = x + y; }
    action hit_act(bit<8> v) { h.h.k = v; }
    // the field key is read before the second key's call increments it
    table t {
        key = { h.h.a : exact; inc(h.h.a) : exact @name("next_a"); }
        actions = { hit_act; NoAction; }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 1;
        if (h.h.k == 0) {
            h.h.b = add(h.h.a, inc(h.h.a));         // a before the call, then the call's
            h.h.c = acc(h.h.a, inc(h.h.a));         // x copied in before inc; copied out after
            h.h.d = (h.h.a ++ inc(h.h.a))[15:8];    // the left operand first
            h.h.e = 2;
            h.h.e += inc(h.h.e);                    // e = 2 + 3
            h.h.f = -inc(h.h.a);
            h.h.g = twice(h.h.a);                   // return inc(x) + inc(x)
            r.write((bit<32>)h.h.a - 16, inc(h.h.a));  // the index before the value's call
            r.read(h.s[0].v, 1);
            h.s[1].v = h.s[inc(h.h.k)[0:0]].v + 1;
            for (bit<8> i = inc(h.h.b); i < 15; i = i + 1) {  // the initialiser's call, once
                h.h.e = h.h.e + 1;
            }
        } else {
            t.apply();
            put(h.h.b, inc(h.h.b));                 // action: x copied in before inc
            sum.apply(h.h.c, inc(h.h.c), h.h.d);    // a control's in argument: before inc
        }
    }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pk, in H h) { apply { pk.emit(h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
