// Generic parsers and controls (issue 16): each instance specialised at its type arguments, as
// p4c's SpecializeAll does; see test_exec_generic_blocks.py.  The generic bodies use T only as
// p4c allows for every T (copied, extracted, emitted, passed on, action data).
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> op; bit<8> a; bit<8> b; bit<16> c; bit<16> d; }
header x_t { bit<8> v; }
struct hs_t { h_t h; x_t x; }
struct m_t { bit<8> k; }

// a generic sub-parser: extracts a header of the type it is given
parser Get<H>(packet_in p, out H hdr) {
    state start { p.extract(hdr); transition accept; }
}

parser Prs(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    Get<h_t>() gh;
    Get<x_t>() gx;
    state start {
        gh.apply(p, h.h);
        transition select(h.h.op) { 4: more; 6: direct; default: accept; }
    }
    state more { gx.apply(p, h.x); transition accept; }
    state direct { Get<x_t>.apply(p, h.x); transition accept; }  // direct application
}

control Swap<T>(inout T a, inout T b) { apply { T t = a; a = b; b = t; } }

// a table in a generic control; its action data is of type T
control SetIf<T>(inout T v, in bit<8> k) {
    action set(T x) { v = x; }
    table t { key = { k: exact; } actions = { set; NoAction; } default_action = NoAction(); }
    apply { t.apply(); }
}

// an instance of another generic control at its own type parameter
control Nest<T>(inout T a, inout T b, in bool go) {
    Swap<T>() s;
    apply { if (go) { s.apply(a, b); } }
}

// a constructor parameter of type T
control Put<T>(out T v)(T c) { apply { v = c; } }

control NoCk<H, M>(inout H h, inout M m) { apply { } }

control Ing(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    Swap<bit<8>>() sw8;
    Swap<bit<16>>() sw16;
    Swap<bit<8>>() sx;  // a second instance at the same type arguments
    SetIf<bit<8>>() s8;
    SetIf<bit<16>>() s16;
    Nest<h_t>() nh;
    Put<bit<8>>(8w9) p9;
    Put(16w0x1234) pc;  // T inferred from the constructor argument (p4c's generic1 sample)
    apply {
        s.egress_spec = 2;
        if (h.h.op == 1) {
            sw8.apply(h.h.a, h.h.b);
            sw16.apply(h.h.c, h.h.d);
        } else if (h.h.op == 2) {
            s8.apply(h.h.a, h.h.b);
            s16.apply(h.h.c, h.h.b);
        } else if (h.h.op == 3) {
            h_t o = h.h;
            o.a = 0x77;
            nh.apply(h.h, o, true);
            h.h.b = o.a;
        } else if (h.h.op == 4) {
            sx.apply(h.h.a, h.x.v);
        } else if (h.h.op == 5) {
            p9.apply(h.h.a);
        } else if (h.h.op == 6) {
            Swap<bit<8>>.apply(h.h.a, h.x.v);  // direct application: an instance of its own
            Swap<bit<16>>.apply(h.h.c, h.h.d);
        } else if (h.h.op == 7) {
            pc.apply(h.h.c);
        }
    }
}

control Eg<H, M>(inout H h, inout M m, inout standard_metadata_t s) { apply { } }

control Dep<H>(packet_out b, in H h) { apply { b.emit(h); } }

Eg<hs_t, m_t>() eg;

V1Switch(Prs(), NoCk<hs_t, m_t>(), Ing(), eg, NoCk<hs_t, m_t>(), Dep<hs_t>()) main;
