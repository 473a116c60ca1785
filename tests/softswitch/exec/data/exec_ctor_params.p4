/* Constructor parameters of parsers and controls: compile-time constants inside the block,
   given by V1Switch's arguments, a top-level instance and sub-parser/sub-control instances. */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<8> e; bit<8> f; }
struct hs_t { h_t h; }
struct m_t { bit<8> x; }
enum bit<8> Kind { ONE = 1, TWO = 2 }

parser Sub(packet_in p, inout hs_t h)(bit<8> k, Kind kind) {
    state start { h.h.c = h.h.c + k + (bit<8>) kind; transition accept; }
}
parser Nest(packet_in p, inout hs_t h)(bit<8> k) {
    Sub(k * 2, Kind.ONE) inner;  // an outer constructor parameter in a constant argument
    state start { inner.apply(p, h); transition accept; }
}
parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s)(bit<8> add) {
    Sub(8w5, Kind.TWO) sp;
    Nest(add) np;
    state start {
        p.extract(h.h);
        h.h.b = h.h.b + add;
        sp.apply(h = h, p = p);  // named arguments of a sub-parser's apply
        np.apply(p, h);
        transition accept;
    }
}
control V(inout hs_t h, inout m_t m) { apply { } }
control Inner(inout hs_t h)(bit<8> v, bool flag) {
    action put() { h.h.d = h.h.d + v; }
    apply { if (flag) { put(); } }
}
control Twice(inout hs_t h)(Inner first, bit<8> w) {
    apply { first.apply(h); h.h.f = w; }
}
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s)(bit<9> port, bit<8> k) {
    Inner(k + 1, true) in1;
    Inner(flag = true, v = 8w100) in2;
    Inner(8w7, false) off;
    Twice(in2, k) tw;
    counter(32w4, CounterType.packets) hits;
    table t {
        key = { h.h.a: exact; }
        actions = { NoAction; }
        const entries = { k : NoAction(); }
    }
    apply {
        s.egress_spec = port;
        h.h.a = h.h.a + k;
        in1.apply(h);
        off.apply(h);
        tw.apply(h);
        if (t.apply().hit) { h.h.e = 1; }
        hits.count((bit<32>) (k - 40));
    }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.h); } }
I(9w3, 8w40) ig;
V1Switch(P(8w2), V(), ig, E(), C(), D()) main;
