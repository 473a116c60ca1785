/* The extern calls p4c's bmv2 back end takes in a parser state -- verify, log_msg, assert and
 * assume -- plus header and stack built-in methods and a function inlined into a state. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<8> t; bit<8> v; }
header tag_t { bit<8> x; }
struct hs_t { eth_t e; tag_t extra; tag_t[2] st; }
struct m_t { bit<8> sum; }

bit<8> twice(in bit<8> a) {
    log_msg("twice {}", {a});
    return a + a;
}

parser P(packet_in pkt, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start {
        pkt.extract(h.e);
        log_msg("parsed t={} v={}", {h.e.t, h.e.v});
        assert(h.e.t != 0xAA);
        assume(h.e.v != 0xBB);
        m.sum = twice(h.e.v);
        h.extra.setValid();
        h.extra.x = 0x5E;
        h.st[0].setValid();
        h.st[0].x = h.e.t;
        transition select(h.e.t) { 1: drop_extra; 2: bad; default: accept; }
    }
    state drop_extra {
        h.extra.setInvalid();
        transition accept;
    }
    state bad {
        verify(h.e.v < 10, error.NoMatch);
        log_msg("verify passed");
        transition accept;
    }
}
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    apply {
        s.egress_spec = 1;
        h.e.v = m.sum;
        if (s.parser_error == error.NoMatch) { h.e.v = 0xEE; }
    }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.e); p.emit(h.extra); p.emit(h.st); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
