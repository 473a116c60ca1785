// Signed values where they meet unsigned machinery: a cast into an enum over int<8>, an int<8>
// table key and select key (bmv2 matches the field's bytes), hash() and random() into int<8>.
#include <core.p4>
#include <v1model.p4>

enum int<8> Dir { BACK = -1, STOP = 0, FWD = 1 }

header h_t { int<8> a; bit<8> sel; bit<8> t_exact; bit<8> t_range; bit<8> en; bit<8> hneg; bit<16> hwide; bit<8> rneg; }
struct hs_t { h_t h; }
struct m_t { bit<8> x; }

parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start {
        p.extract(h.h);
        transition select(h.h.a) { -1: minus_one; -8 &&& -4: minus_eight_block; default: accept; }
    }
    state minus_one { h.h.sel = 1; transition accept; }
    state minus_eight_block { h.h.sel = 2; transition accept; }
}
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    action exact_hit(bit<8> v) { h.h.t_exact = v; }
    action in_range(int<8> v) { h.h.t_range = (bit<8>)v; }
    action set_dir(Dir d) { h.h.en = (bit<8>)(int<8>)d; }  // puts the enum in the P4Info
    table dirs { key = { h.h.sel: exact; } actions = { set_dir; NoAction; } default_action = NoAction(); }
    table by_exact {
        key = { h.h.a: exact; }
        actions = { exact_hit; }
        const entries = { -1: exact_hit(0x11); 1: exact_hit(0x22); }
        default_action = exact_hit(0x33);
    }
    table by_range {
        key = { h.h.a: range; }
        actions = { in_range; }
        const entries = { -5 .. -3: in_range(-2); }
        default_action = in_range(3);
    }
    apply {
        s.egress_spec = 2;
        by_exact.apply();
        by_range.apply();
        dirs.apply();
        Dir d = (Dir)h.h.a;
        if (d == Dir.BACK) { h.h.en = 1; } else if (d == Dir.FWD) { h.h.en = 2; } else { h.h.en = 3; }
        int<8> hv;
        hash(hv, HashAlgorithm.identity, 8w0, { h.h.a }, 16w256);
        h.h.hneg = hv < 0 ? 8w1 : 8w0;
        h.h.hwide = (bit<16>)(int<16>)hv;
        int<8> rv;
        random(rv, -2, -2);
        h.h.rneg = (bit<8>)rv;
    }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
