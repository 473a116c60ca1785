// Table keys of type error: const entries name error members, the control plane writes the
// error's number (declaration order: NoError 0, PacketTooShort 1, ..., user errors after).
#include <core.p4>
#include <v1model.p4>

error { BadTag }

header h_t { bit<8> tag; bit<8> r1; bit<8> r2; }
header x_t { bit<16> x; }
struct H { h_t h; x_t x; }
struct M { error e; }

parser P(packet_in b, out H h, inout M m, inout standard_metadata_t sm) {
    state start {
        b.extract(h.h);
        verify(h.h.tag != 0xff, error.BadTag);
        b.extract(h.x);
        transition accept;
    }
}

control I(inout H h, inout M m, inout standard_metadata_t sm) {
    action set1(bit<8> v) { h.h.r1 = v; }
    action set2(bit<8> v) { h.h.r2 = v; }
    table by_parser_error {
        key = { sm.parser_error : exact; }
        actions = { set1; }
        const entries = {
            error.NoError : set1(0x10);
            error.PacketTooShort : set1(0x11);
            error.BadTag : set1(0x12);
        }
        default_action = set1(0xee);
    }
    table by_meta {
        key = { m.e : exact; }
        actions = { set2; }
        default_action = set2(0xee);
    }
    apply {
        sm.egress_spec = 1;
        m.e = sm.parser_error;
        by_parser_error.apply();
        by_meta.apply();
    }
}

control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control D(packet_out b, in H h) { apply { b.emit(h.h); b.emit(h.x); } }
control V(inout H h, inout M m) { apply { } }
control U(inout H h, inout M m) { apply { } }

V1Switch(P(), V(), I(), E(), U(), D()) main;
