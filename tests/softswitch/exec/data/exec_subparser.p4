/* A sub-parser instance applied from a parser state (inlined as p4c does): copy-in, copy-out on
 * its accept, the rest of the calling state after it, and an error inside it. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<8> t; }
header opt_t { bit<8> kind; bit<8> v; }
struct hs_t { eth_t e; opt_t o1; opt_t o2; }
struct m_t { bit<8> seen; }

parser Opt(packet_in pkt, out opt_t o, inout bit<8> count, in bit<8> limit) {
    bit<8> local = 0;
    state start {
        pkt.extract(o);
        local = o.v;
        transition select(o.kind) { 1: more; default: accept; }
    }
    state more {
        verify(local < limit, error.NoMatch);
        count = count + local;
        transition accept;
    }
}

parser P(packet_in pkt, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    Opt() opt;
    state start {
        pkt.extract(h.e);
        m.seen = 1;
        opt.apply(pkt, h.o1, m.seen, 8w100);
        m.seen = m.seen + 1;
        transition select(h.e.t) { 2: second; default: accept; }
    }
    state second {
        opt.apply(pkt, h.o2, m.seen, 8w10);
        transition accept;
    }
}
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    apply { s.egress_spec = 1; h.e.t = m.seen; if (s.parser_error == error.NoMatch) { h.e.t = 0xEE; } }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.e); p.emit(h.o1); p.emit(h.o2); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
