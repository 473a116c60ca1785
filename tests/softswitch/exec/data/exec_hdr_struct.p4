/* Struct-typed fields inside headers (P4_16 spec: a header field may be a struct of bit<W>,
 * int<W>, bool and serializable enums, nested; p4c's bmv2 back end flattens it).  Wire layout:
 * the leaves in order, bit-packed.  Byte 0 of the packet selects what ingress does. */
#include <core.p4>
#include <v1model.p4>

enum bit<3> color_t { RED = 1, GREEN = 2, BLUE = 5 }
struct alt_t { bit<1> valid; bit<7> port; }
struct inner_t { int<4> delta; bool flag; color_t color; }   // 4 + 1 + 3 = 8 bits
struct row_t { alt_t alt0; inner_t inr; bit<12> id; bit<4> pad; }  // 8 + 8 + 16 = 32 bits

header op_t { bit<8> op; }
header h_t { bit<8> a; row_t row; }                  // 40 bits
header g_t { bit<16> b; alt_t alt; }                 // 24 bits
header_union u_t { h_t h; g_t g; }
header k_t { bit<8> key; }

struct hs_t { op_t op; h_t h; u_t u; h_t[2] st; k_t k; h_t x; }  // x: only extracted
struct m_t { row_t saved; bit<8> r; }

parser P(packet_in p, out hs_t hs, inout m_t m, inout standard_metadata_t s) {
    state start {
        p.extract(hs.op);
        transition select(hs.op.op) {
            8: peek;
            9: union_g;
            10: stack;
            12: only;
            default: plain;
        }
    }
    state plain { p.extract(hs.h); transition accept; }
    state peek {   // lookahead of a header with a struct field, then extract it
        h_t la = p.lookahead<h_t>();
        m.r = (bit<8>) la.row.alt0.port;
        p.extract(hs.h);
        transition accept;
    }
    state union_g { p.extract(hs.u.g); transition accept; }
    state only { p.extract(hs.x); transition accept; }
    state stack { p.extract(hs.st.next); p.extract(hs.st.next); transition accept; }
}
control V(inout hs_t hs, inout m_t m) { apply { } }
control I(inout hs_t hs, inout m_t m, inout standard_metadata_t s) {
    action set_alt(bit<7> port) { hs.h.row.alt0 = { 1, port }; }
    table by_id {
        key = { hs.h.row.id: exact; hs.h.row.inr.color: exact; }
        actions = { set_alt; NoAction; }
        default_action = NoAction();
    }
    apply {
        s.egress_spec = 1;
        bit<8> op = hs.op.op;
        if (op == 1) {            // leaf reads and writes, each kind
            hs.h.row.alt0.port = hs.h.row.alt0.port + 1;
            hs.h.row.inr.delta = hs.h.row.inr.delta - 1;
            hs.h.row.inr.flag = !hs.h.row.inr.flag;
            hs.h.row.inr.color = color_t.BLUE;
            hs.h.a = (bit<8>) hs.h.row.id;
        } else if (op == 2) {     // struct-valued assignments, both ways
            m.saved = hs.h.row;
            m.saved.id = 0xABC;
            hs.h.row = m.saved;
            hs.h.row.alt0 = { 0, 0x55 };
        } else if (op == 3) {     // == on a struct field and on the whole header
            alt_t want = { 1, 7 };
            inner_t other = { -1, true, color_t.RED };
            h_t copy = hs.h;
            copy.row.id = 0;
            hs.h.a = (hs.h.row.alt0 == want ? 8w1 : 8w0) | (hs.h == copy ? 8w2 : 8w0)
                   | (hs.h.row.inr != other ? 8w4 : 8w0);
        } else if (op == 4) {     // setInvalid + setValid: every leaf zero
            hs.h.setInvalid();
            hs.h.setValid();
            hs.h.a = 0xEE;
        } else if (op == 5) {     // table keys on leaves
            by_id.apply();
        } else if (op == 6) {     // a digest of a struct read from a header
            digest<alt_t>(1, hs.h.row.alt0);
        } else if (op == 7) {     // hash inputs: leaves of an invalid header are left out (x is)
            bit<16> r;
            hash(r, HashAlgorithm.identity, 16w0, { hs.h.row.alt0, hs.x.row.alt0 }, 32w65536);
            hs.k.setValid();
            hs.k.key = r[15:8];
            hs.h.a = r[7:0];
        } else if (op == 8) {
            hs.k.setValid();
            hs.k.key = m.r;
        } else if (op == 9) {     // a header_union member with a struct field
            hs.u.g.alt = { 1, 0x11 };
        } else if (op == 10) {    // a stack of such headers: swap, then write a leaf
            h_t t = hs.st[0];
            hs.st[0] = hs.st[1];
            hs.st[1] = t;
            hs.st[1].row.id = 0x123;
        } else if (op == 11) {    // a whole header built from a structure-valued expression
            hs.h = { 0x77, { { 1, 2 }, { 3, false, color_t.GREEN }, 0x456, 0xF } };
        }
    }
}
control E(inout hs_t hs, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs_t hs, inout m_t m) { apply { } }
control D(packet_out p, in hs_t hs) {
    apply { p.emit(hs.op); p.emit(hs.h); p.emit(hs.u); p.emit(hs.st); p.emit(hs.k); p.emit(hs.x); }
}
V1Switch(P(), V(), I(), E(), C(), D()) main;
