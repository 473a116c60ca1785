#include <core.p4>
#include <v1model.p4>
// A header stack whose element has a varbit field: each element's length is in its first byte
// (in 8-bit units), extracted with the two-argument extract into stack.next, emitted at the
// parsed widths; stacks compared with ==.  The third extract overflows the stack of two.
header opt_t { bit<8> len; varbit<24> data; }
header out_t { bit<8> same; }
struct H { opt_t[2] o; out_t r; }
struct M { }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t sm) {
    state start {
        pk.extract(h.o.next, (bit<32>) pk.lookahead<bit<8>>() * 8);
        pk.extract(h.o.next, (bit<32>) pk.lookahead<bit<8>>() * 8);
        transition select(pk.lookahead<bit<8>>()) { 0xff: accept; default: more; }
    }
    state more {
        pk.extract(h.o.next, (bit<32>) pk.lookahead<bit<8>>() * 8);
        transition accept;
    }
}
control VC(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    apply {
        opt_t[2] tmp;
        tmp[0] = h.o[1];
        tmp[1] = h.o[0];
        h.r.setValid();
        h.r.same = 0;
        if (sm.parser_error == error.StackOutOfBounds) { h.r.same = 3; }
        if (h.o[0] == h.o[1]) { h.r.same = h.r.same | 0x10; }
        if (tmp == h.o) { h.r.same = h.r.same | 0x20; }
        sm.egress_spec = 1;
    }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pk, in H h) { apply { pk.emit(h.o); pk.emit(h.r); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
