// Headers whose fields do not fill whole bytes: like p4c's bmv2 back end, the header is padded
// at its end to whole bytes -- extract takes the padding bits from the packet, emit writes them
// back, a header made valid in the program has zero padding.
#include <core.p4>
#include <v1model.p4>

header odd_t { bit<8> op; bit<4> a; bit<1> f; }   // 13 bits: 3 padding bits
header tail_t { bit<3> t; }                        // 3 bits: 5 padding bits
struct H { odd_t o; tail_t[2] s; tail_t n; }
struct M { }

parser P(packet_in b, out H h, inout M m, inout standard_metadata_t sm) {
    state start {
        b.extract(h.o);
        transition select(h.o.op) {
            1: two;
            default: accept;
        }
    }
    state two { b.extract(h.s.next); b.extract(h.s.next); transition accept; }
}

control I(inout H h, inout M m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        h.o.a = h.o.a + 1;
        h.o.f = ~h.o.f;
        if (h.o.op == 1 && h.s[0] == h.s[1]) {
            h.o.op = 0x11;   // equal fields: padding bits take no part in '=='
        }
        if (h.o.op == 2) {
            h.n.setValid();
            h.n.t = 5;
            h.o.a = (bit<4>)h.o.sizeInBits();   // 13: padding is not part of the P4 type
        }
    }
}

control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control D(packet_out b, in H h) { apply { b.emit(h.o); b.emit(h.s); b.emit(h.n); } }
control V(inout H h, inout M m) { apply { } }
control U(inout H h, inout M m) { apply { } }

V1Switch(P(), V(), I(), E(), U(), D()) main;
