// Header and stack copies as bmv2 runs them (tests: test_exec_bmv2_header_copies.py): push_front /
// pop_front swap elements and leave the freed ones invalid with what they held; a header assigned
// from an invalid one (or {#}) becomes invalid and keeps its fields. h.x.v picks the case.
#include <core.p4>
#include <v1model.p4>
header e_t { bit<8> v; }
header o_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<8> n; }
struct hs_t { e_t[3] st; o_t o; e_t x; e_t y; }
struct m_t { bit<8> mode; }
parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start { p.extract(h.x); p.extract(h.st.next); p.extract(h.st.next); p.extract(h.st.next); transition accept; }
}
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    apply {
        s.egress_spec = 1;
        h.o.setValid();
        if (h.x.v == 1) {          // push_front(1): element 0 invalid; its field?
            h.st.push_front(1);
            h.o.a = h.st[0].v;
            h.o.b = (bit<8>)(bit<1>)h.st[0].isValid();
        } else if (h.x.v == 2) {   // pop_front(1): element 2 invalid; its field?
            h.st.pop_front(1);
            h.o.a = h.st[2].v;
            h.o.b = (bit<8>)(bit<1>)h.st[2].isValid();
        } else if (h.x.v == 3) {   // y = invalid header; x's field afterwards
            h.y.setInvalid();
            h.x = h.y;
            h.o.a = h.x.v;
            h.o.b = (bit<8>)(bit<1>)h.x.isValid();
            h.x.setValid();
            h.x.v = 3;
        } else if (h.x.v == 4) {   // x = {#}
            h.x = (e_t){#};
            h.o.a = h.x.v;
            h.o.b = (bit<8>)(bit<1>)h.x.isValid();
            h.x.setValid();
            h.x.v = 4;
        } else if (h.x.v == 5) {   // push_front(2)
            h.st.push_front(2);
            h.o.a = h.st[0].v;
            h.o.b = h.st[1].v;
            h.o.c = h.st[2].v;
        } else if (h.x.v == 6) {   // setInvalid then read
            h.st[1].setInvalid();
            h.o.a = h.st[1].v;
        } else if (h.x.v == 7) {   // pop 1, setValid on tail then read (bmv2 add_header resets)
            h.st.pop_front(1);
            h.st[2].setValid();
            h.o.a = h.st[2].v;
        }
    }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.x); p.emit(h.o); p.emit(h.st); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
