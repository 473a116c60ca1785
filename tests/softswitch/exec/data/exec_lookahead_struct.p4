// lookahead<T> of a struct (p4c's ExpandLookahead: the next bits, cut into the fields first field
// first): nested struct, int<4>, bool, serializable enum; and as a statement for its length only
#include <core.p4>
#include <v1model.p4>

enum bit<4> Kind { A = 1, B = 9 }
struct In_t { bit<4> lo; int<4> s; }
struct Peek_t { bit<8> first; In_t inner; bool flag; bit<3> pad; Kind k; bit<4> last; }
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header out_t { bit<8> first; bit<4> lo; bit<4> s_neg; bit<8> flag; bit<8> k_is_b; bit<8> last; }
struct H { eth_t eth; out_t o; }
struct M { Peek_t p; }

parser P(packet_in pkt, out H h, inout M m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.eth);
        pkt.lookahead<Peek_t>();  // a statement: only the length counts (too short: PacketTooShort)
        m.p = pkt.lookahead<Peek_t>();
        transition select(m.p.inner.s) {
            -1: neg;
            default: accept;
        }
    }
    state neg { h.o.setValid(); h.o.s_neg = 1; transition accept; }
}
control VC(inout H h, inout M m) { apply { } }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    apply {
        if (sm.parser_error != error.NoError) { mark_to_drop(sm); return; }
        sm.egress_spec = 1;
        h.o.setValid();
        h.o.first = m.p.first;
        h.o.lo = m.p.inner.lo;
        h.o.flag = m.p.flag ? 8w1 : 8w0;
        h.o.k_is_b = m.p.k == Kind.B ? 8w1 : 8w0;
        h.o.last = (bit<8>)m.p.last;
    }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pkt, in H h) { apply { pkt.emit(h.eth); pkt.emit(h.o); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
