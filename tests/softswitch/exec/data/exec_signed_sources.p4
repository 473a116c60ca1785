/* Signed values wherever they come from: nested int<W> arithmetic, direct action calls with
 * negative arguments, a signed serializable enum held in a header field, a metadata field, an
 * action parameter (constant default and runtime entry) and a register, a negative constant
 * default argument of a width that is no multiple of 8, and a signed constant shift amount. */
#include <core.p4>
#include <v1model.p4>

enum int<8> S8 { X = -3, Y = 100 }

header in_t { int<8> b; S8 s; bit<8> k; }
header out_t {
    int<8> w;       // (b + 1) * 2
    int<8> sat;     // a1(b): x |-| 100
    bit<1> e_rt;    // a1(b): x == -1
    bit<1> e_const; // a2(-1): x == -1
    bit<1> f_s;     // hdr s == S8.X
    bit<1> f_m;     // the same through a metadata field
    bit<1> t_def;   // const default action ad(S8.X): x == S8.X
    bit<1> t_rt;    // runtime entry ar(0xfd): x == S8.X
    bit<1> r_s;     // register<S8> read back == S8.X
    bit<1> pad;
    int<5> d5;      // const default action a5((int<5>)(-16))
    bit<3> pad2;
    int<8> shl;     // b << 8s1
    int<8> shr;     // b >> 8s1
}
struct headers_t { in_t i; out_t o; }
struct meta_t { S8 la; }

parser P(packet_in pk, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pk.extract(h.i); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control Ig(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    register<S8>(1) rs;
    action a1(int<8> x) { h.o.e_rt = (bit<1>)(x == -1); h.o.sat = x |-| 8s100; }
    action a2(int<8> x) { h.o.e_const = (bit<1>)(x == -1); }
    action ad(S8 x) { h.o.t_def = (bit<1>)(x == S8.X); }
    action ar(S8 x) { h.o.t_rt = (bit<1>)(x == S8.X); }
    action a5(int<5> x) { h.o.d5 = x; }
    table td { actions = { ad; } const default_action = ad(S8.X); }
    table tr { key = { h.i.k : exact; } actions = { ar; NoAction; } default_action = NoAction(); }
    table t5 { actions = { a5; } const default_action = a5((int<5>)(-16)); }
    apply {
        h.o.setValid();
        h.o.w = (h.i.b + 1) * 2;
        a1(h.i.b);
        a2(-1);
        h.o.f_s = (bit<1>)(h.i.s == S8.X);
        m.la = h.i.s;
        h.o.f_m = (bit<1>)(m.la == S8.X);
        td.apply();
        tr.apply();
        rs.write(0, h.i.s);
        S8 z;
        rs.read(z, 0);
        h.o.r_s = (bit<1>)(z == S8.X);
        t5.apply();
        h.o.shl = h.i.b << 8s1;
        h.o.shr = h.i.b >> 8s1;
        sm.egress_spec = 1;
    }
}
control Eg(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pk, in headers_t h) { apply { pk.emit(h.i); pk.emit(h.o); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
