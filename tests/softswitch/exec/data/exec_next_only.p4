/* A header stack only extract(s.next) fills (n elements, n from the first header), a second one an
 * action also sets valid by index, and a third extracted by a constant index: the first alone may
 * be skipped whole while its nextIndex is 0 (usage.next_only_stacks). */
#include <core.p4>
#include <v1model.p4>

header n_t { bit<8> n; bit<8> m; }
header e_t { bit<16> v; }
struct headers_t { n_t h; e_t[3] s; e_t[2] t; e_t[2] u; }
struct meta_t { bit<8> left; }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.h);
        m.left = h.h.n;
        transition select(m.left) { 0: tail; default: elem; }
    }
    state elem {
        pkt.extract(h.s.next);
        m.left = m.left - 1;
        transition select(m.left) { 0: tail; default: elem; }
    }
    state tail {
        transition select(h.h.m) { 1: one_t; 2: one_u; default: accept; }
    }
    state one_t { pkt.extract(h.t.next); transition accept; }
    state one_u { pkt.extract(h.u[1]); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    action add_t() { h.t[1].setValid(); h.t[1].v = 0x7777; }
    apply {
        sm.egress_spec = 1;
        if (h.h.m == 3) { add_t(); }
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
