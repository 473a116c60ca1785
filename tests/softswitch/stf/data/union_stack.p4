#include <core.p4>
#include <v1model.p4>
// A header stack of header_unions, indexed by constants and at run time: extract into a
// member, setValid() of another member invalidates the first, isValid() of an element and of
// a member, emit of the whole stack (each element's valid member).
header k_t { bit<8> k; }
header a_t { bit<8> v; }
header b_t { bit<16> w; }
header_union ab_t { a_t a; b_t b; }
struct H { k_t k; ab_t[2] us; }
struct M { }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t sm) {
    state start {
        pk.extract(h.k);
        transition select(h.k.k) { 0: ab; 1: ba; default: accept; }
    }
    state ab { pk.extract(h.us[0].a); pk.extract(h.us[1].b); transition accept; }
    state ba { pk.extract(h.us[0].b); pk.extract(h.us[1].a); transition accept; }
}
control VC(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    apply {
        if (h.us[0].a.isValid()) {
            h.us[0].b.setValid();
            h.us[0].b.w = 0xBBBB;
        }
        if (h.us[1].isValid()) { h.k.k = h.k.k | 0x10; }
        bit<1> i = 1;
        if (h.us[i].a.isValid()) { h.k.k = h.k.k | 0x20; }
        sm.egress_spec = 1;
    }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pk, in H h) { apply { pk.emit(h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
