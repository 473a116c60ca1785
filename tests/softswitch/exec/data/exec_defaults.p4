/* The invalid header expression {#} and default values '...' (P4_16 1.2.5): assignments of
 * {#} to a header, a header_union, stack elements (constant and run-time index) and whole
 * stacks; {#} compared with == / != (a validity test), passed as an argument and returned from
 * a function; '...' in struct and header initialisers (named and positional), alone as a
 * variable's initialiser, in a typed initialiser (T){...}; each field's default value (0,
 * false, a plain enum's first member, 0 for a serializable enum, error.NoError, invalid
 * headers).  Packet: op, idx, a.x, a.y, st[0].x, st[0].y, st[1].x, st[1].y.  The report header
 * goes out first. */
#include <core.p4>
#include <v1model.p4>

header op_t { bit<8> op; bit<8> idx; }
header a_t { bit<8> x; bit<8> y; }
header b_t { bit<16> z; }
header_union ab_t { a_t a; b_t b; }
header rep_t {
    bit<8> r0; bit<8> r1; bit<8> r2; bit<8> r3; bit<8> r4; bit<8> r5;
    bit<8> r6; bit<8> r7; bit<8> r8; bit<8> r9; bit<8> r10;
}
enum Pick { X, Y }
enum bit<8> SE { P = 3, Q = 4 }
struct s_t { bit<8> x; bool f; Pick e; SE se; a_t hh; error er; }
struct hs_t { rep_t rep; op_t op; a_t a; a_t[2] st; ab_t u; }
struct m_t { bit<8> unused; }

a_t mk(in bit<8> v) {
    if (v == 0) {
        return {#};
    }
    return {x = v, ...};
}

bool is_invalid(in a_t h) {
    return h == {#};
}

parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t sm) {
    state start {
        p.extract(h.op);
        p.extract(h.a);
        p.extract(h.st.next);
        p.extract(h.st.next);
        transition accept;
    }
}
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        bit<8> op = h.op.op;
        if (op == 1) {
            h.a = {#};
        } else if (op == 2) {
            h.st[1] = {#};
        } else if (op == 3) {
            h.st[h.op.idx] = {#};
        } else if (op == 4) {
            h.st = ...;
        } else if (op == 5) {
            h.a = {y = 0x44, ...};
        } else if (op == 6) {
            h.a = mk(0);
        } else if (op == 7) {
            h.a = mk(0x66);
        } else if (op == 8) {
            h.u.a = {...};
        } else if (op == 9) {
            h.u.b = {z = 0x1234};
            h.u = {#};
        } else if (op == 10) {
            h.a = ...;
        }

        s_t s = {x = 5, ...};
        s_t s2 = ...;
        s_t s3 = {hh = {...}, ...};
        a_t t = {...};
        a_t t2 = {y = 9, ...};
        a_t t3 = {7, ...};
        ab_t lu = ...;
        ab_t[2] us;
        us[0].a.setValid();
        us[0] = {#};
        us[1].b = (b_t){...};

        h.rep.setValid();
        h.rep.r0 = h.a == {#} ? 8w1 : 8w0;
        h.rep.r1 = h.u != {#} ? 8w1 : 8w0;
        h.rep.r2 = is_invalid(h.a) ? 8w1 : 8w0;
        h.rep.r3 = is_invalid({#}) ? 8w1 : 8w0;
        h.rep.r4 = s.x;
        h.rep.r5 = (s.f ? 8w1 : 8w0) | (s.e == Pick.X ? 8w2 : 8w0) | (s.hh.isValid() ? 8w4 : 8w0)
                 | (s.er == error.NoError ? 8w8 : 8w0) | (s2.x == 0 && !s2.f ? 8w0x10 : 8w0)
                 | (s3.hh.isValid() && s3.hh.x == 0 ? 8w0x20 : 8w0);
        h.rep.r6 = (bit<8>) s.se;
        h.rep.r7 = (t.isValid() ? 8w1 : 8w0) | (t2.isValid() ? 8w2 : 8w0) | (t3.isValid() ? 8w4 : 8w0);
        h.rep.r8 = t2.y + t3.x;
        h.rep.r9 = t.x | t.y | t2.x | t3.y;
        h.rep.r10 = (lu.isValid() ? 8w1 : 8w0) | (us[0].isValid() ? 8w2 : 8w0)
                  | (us[1] != {#} ? 8w4 : 8w0) | ((a_t){#} == (a_t){#} ? 8w8 : 8w0);
    }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t sm) { apply { } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) {
    apply { p.emit(h.rep); p.emit(h.op); p.emit(h.a); p.emit(h.st); p.emit(h.u); }
}
V1Switch(P(), V(), I(), E(), C(), D()) main;
