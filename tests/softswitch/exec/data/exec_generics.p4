// Generic functions and generic struct/header types (issue 16), specialised per type arguments
// as p4c's SpecializeGenericFunctions / SpecializeGenericTypes do; see test_exec_generics.py.
#include <core.p4>
#include <v1model.p4>

header G<T> { bit<8> op; T v; }
header E<T> { T x; }
struct P<T, U> { T a; U b; }
struct W<T> { P<T, bit<8>> p; }
header_union U<T> { E<T> a; E<bit<16>> b; }

struct hs_t { G<bit<16>> g; E<bit<8>>[2] st; }
struct m_t { P<bit<16>, bool> p; W<bit<16>> w; }

T id<T>(in T x) { return x; }
T pick<T, U>(in T a, in U b, in bool first) {
    T t = (T)b;  // a local and a cast of the type parameter
    if (first) { return a; }
    return t;
}
void swap<T>(inout T a, inout T b) { T t = a; a = b; b = t; }
void put<T>(out T o, in T v) { o = v; }
T second<T>(in P<T, T> p) { return p.b; }   // T inferred through P<T, T>
T last<T>(in T[2] s) { return s[1]; }       // and through a stack type

parser Prs(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start { p.extract(h.g); p.extract(h.st.next); p.extract(h.st.next); transition accept; }
}
control Vfy(inout hs_t h, inout m_t m) { apply { } }
control Ing(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    action set_v(bit<16> v) { h.g.v = v; }
    table by_p {
        key = { m.p.a: exact; m.p.b: exact; }
        actions = { set_v; NoAction; }
        default_action = NoAction();
    }
    apply {
        s.egress_spec = 2;
        if (h.g.op == 1) {
            h.g.v = id(h.g.v) + 1;                 // T inferred as bit<16>
            h.st[0].x = id<bit<8>>(h.st[1].x);     // explicit
        } else if (h.g.op == 2) {
            swap(h.st[0], h.st[1]);                // T is the header type E_bit8
        } else if (h.g.op == 3) {
            h.g.v = pick(h.g.v, h.st[0].x, false); // (bit<16>) st[0].x
            h.st[1].x = pick(h.g.op, h.g.v, false); // (bit<8>) of the new v
        } else if (h.g.op == 4) {
            m.p = { id(h.g.v), true };
            m.w.p.a = m.p.a + 1;
            m.w.p.b = h.st[0].x;
            put(h.g.v, m.w.p.a);
            swap(m.w.p.b, h.st[1].x);
            h.st[0].x = m.w.p.b;
        } else if (h.g.op == 5) {
            P<bit<8>, bit<8>> l1 = { h.st[0].x, h.st[1].x };
            P<bit<8>, bit<8>> l2 = { 8w0x11, 8w0x22 };
            swap(l1, l2);                          // T is the struct P_bit8_bit8
            swap(l2.a, l2.b);
            h.st[0].x = l1.a ^ l2.a;
            h.st[1].x = l1.b ^ l2.b;
        } else if (h.g.op == 6) {
            m.p.a = h.g.v;
            m.p.b = h.st[0].x == 1;
            by_p.apply();
        } else if (h.g.op == 8) {
            P<bit<8>, bit<8>> l = { h.st[1].x, h.st[0].x };
            h.st[1].x = second(l);
            h.st[0] = last(h.st);
        } else if (h.g.op == 9) {
            U<bit<8>> u;                           // a generic header_union, U_bit8
            u.a = h.st[0];
            h.st[1].x = u.a.isValid() ? u.a.x + 1 : 8w0;
            u.b.setValid();                        // makes u.a invalid
            u.b.x = 16w7;
            if (!u.a.isValid()) { h.st[0].x = (bit<8>)u.b.x; }
        } else if (h.g.op == 7) {
            m.p = { h.g.v, h.st[0].x != 0 };
            digest<P<bit<16>, bool>>(1, m.p);
        }
    }
}
control Egr(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control Cks(inout hs_t h, inout m_t m) { apply { } }
control Dep(packet_out p, in hs_t h) { apply { p.emit(h); } }
V1Switch(Prs(), Vfy(), Ing(), Egr(), Cks(), Dep()) main;
