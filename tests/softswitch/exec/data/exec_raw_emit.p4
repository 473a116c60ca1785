/* Headers that only extract writes are emitted as the bytes they were extracted from
 * (softswitch's deparser shortcut, docs/softswitch.md "Speed"): the cases where those bytes must
 * not be used.  h1.op: 1 = h2 follows, and the parser reads it twice (the second copy wins);
 * 2 = no h2 on the wire, ingress setValid()s it (all zero); 3 = h2 follows, then a stack of two
 * elements; 4 = h2 follows, the packet is cloned to port 5 (I2E); 5 = h2, then es[0] by a constant
 * index (after packets that filled es through next).  Only h2.a is read: extract
 * stores no other field of h2, nor any of es (softswitch, usage.unread_fields). */
#include <core.p4>
#include <v1model.p4>

header h1_t { bit<8> op; bit<8> n; }
header h2_t { bit<16> a; bit<8> b; bit<8> c; }
header e_t { bit<24> v; }
struct hs_t { h1_t h1; h2_t h2; e_t[2] es; }
struct m_t { }

parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start {
        p.extract(h.h1);
        transition select(h.h1.op) { 1: twice; 3: stack; 4: once; 5: indexed; default: accept; }
    }
    state twice { p.extract(h.h2); p.extract(h.h2); transition accept; }
    state once { p.extract(h.h2); transition accept; }
    state stack { p.extract(h.h2); p.extract(h.es.next); p.extract(h.es.next); transition accept; }
    state indexed { p.extract(h.h2); p.extract(h.es[0]); transition accept; }
}
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    apply {
        s.egress_spec = 2;
        if (h.h1.op == 2) { h.h2.setValid(); }
        if (h.h1.op == 4) { clone(CloneType.I2E, 7); }
        h.h1.n = h.h1.n + 1;
        if (h.h2.a == 0x7777) { h.h1.n = 0x77; }  // the one field of h2 anything reads
    }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.h1); p.emit(h.h2); p.emit(h.es); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
