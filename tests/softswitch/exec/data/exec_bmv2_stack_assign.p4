// A header stack assigned in a control: p4c copies it element by element, nextIndex stays
// (its copyStructures pass): a.lastIndex is 0 after h.a = h.b with a holding one element.
#include <core.p4>
#include <v1model.p4>
header e_t { bit<8> v; }
header o_t { bit<8> a; bit<8> b; }
struct hs_t { e_t[3] a; e_t[3] b; o_t o; }
struct m_t { bit<8> mode; }
parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start { p.extract(h.a.next); p.extract(h.b.next); p.extract(h.b.next); p.extract(h.b.next); transition accept; }
}
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    apply {
        s.egress_spec = 1;
        h.o.setValid();
        h.a = h.b;                       // bmv2 (p4c CopyStructures): per-element copy, a.next stays 1
        h.o.a = (bit<8>)h.a.lastIndex;   // bmv2: 0, spec-wise copy: 2
        h.a.push_front(1);
        h.o.b = (bit<8>)h.a.lastIndex;   // bmv2: 1
    }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.o); p.emit(h.a); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
