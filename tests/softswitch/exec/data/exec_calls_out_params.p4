/* Functions calling value-returning functions (from a function and from an action declared outside
 * any control), and out parameters of header type: fresh (invalid) on entry, in a function, an
 * action, a header stack and a sub-control bound in place. */
#include <core.p4>
#include <v1model.p4>
header in_t { bit<8> a; }
header o_t { bit<8> v; }
header r_t { bit<8> r1; bit<8> r2; bit<8> valid_fn; bit<8> seen; bit<8> valid_act; bit<8> valid_stack; bit<8> valid_ctl; }
struct headers_t { in_t i; r_t r; o_t o; o_t[2] s; o_t p; }
struct meta_t { }

bit<8> g(in bit<8> x) { return x + 1; }
bit<8> f(in bit<8> x) { return g(x); }
void fo(out o_t x) { }
bit<8> seen(out o_t x) { return x.isValid() ? 8w1 : 8w0; }
void fs(out o_t[2] x) { }
action top(inout bit<8> y) { y = g(y); }
control C(out o_t x) { apply { } }

parser P(packet_in pk, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pk.extract(h.i); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control Ig(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    C() c;
    action ao(out o_t x) { }
    apply {
        sm.egress_spec = 1;
        h.r.setValid();
        h.r.r1 = f(h.i.a);
        h.r.r2 = h.i.a;
        top(h.r.r2);
        h.o.setValid(); h.o.v = 5; fo(h.o);
        h.r.valid_fn = h.o.isValid() ? 8w1 : 8w0;
        h.o.setValid(); h.o.v = 5;
        h.r.seen = seen(h.o);
        h.o.setValid(); h.o.v = 5; ao(h.o);
        h.r.valid_act = h.o.isValid() ? 8w1 : 8w0;
        h.s[0].setValid(); h.s[1].setValid(); fs(h.s);
        h.r.valid_stack = (h.s[0].isValid() || h.s[1].isValid()) ? 8w1 : 8w0;
        h.p.setValid(); h.p.v = 5; c.apply(h.p);
        h.r.valid_ctl = h.p.isValid() ? 8w1 : 8w0;
    }
}
control Eg(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pk, in headers_t h) { apply { pk.emit(h.i); pk.emit(h.r); pk.emit(h.o); pk.emit(h.s); pk.emit(h.p); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
