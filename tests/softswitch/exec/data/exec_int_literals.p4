// Arbitrary-precision integer arithmetic (P4_16: `int` values are exact) folded before the value is
// cast to the width where it goes: in assignments, selects, const entries, action arguments,
// function arguments and returns, and with a signed destination.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<8> e; bit<8> f; bit<8> g; bit<8> h; int<8> i; bit<8> j; }
struct hs_t { h_t h; }
struct m_t { bit<8> x; }

const int MTU = 1500;
const int HDR = 40;
const bit<8> K = (1 << 10) >> 8;

bit<8> id(in bit<8> v) { return v; }
bit<8> half() { return 256 / 2; }

parser P(packet_in p, out hs_t h, inout m_t m, inout standard_metadata_t s) {
    state start {
        p.extract(h.h);
        transition select(h.h.a) { 1024 >> 3: hit; default: accept; }
    }
    state hit { h.h.j = 0xAA; transition accept; }
}
control V(inout hs_t h, inout m_t m) { apply { } }
control I(inout hs_t h, inout m_t m, inout standard_metadata_t s) {
    action set(bit<8> v) { h.h.g = v; }
    table t {
        key = { h.h.a: exact; }
        actions = { set; }
        const entries = { 512 >> 2 : set(300 % 7); }
        default_action = set(1024 >> 3);
    }
    apply {
        s.egress_spec = 2;
        h.h.b = MTU / 8;              // 187
        h.h.c = (MTU - HDR) >> 3;     // 182
        h.h.d = K;                    // 4
        h.h.e = -1 >> 4;              // -1: 0xff
        h.h.f = id(256 / 2) + half(); // 128 + 128 = 0 in 8 bits
        h.h.h = 2 * 200 / 4;          // 100
        h.h.i = 200 / 2;              // 100 in int<8>
        t.apply();
    }
}
control E(inout hs_t h, inout m_t m, inout standard_metadata_t s) { apply { } }
control C(inout hs_t h, inout m_t m) { apply { } }
control D(packet_out p, in hs_t h) { apply { p.emit(h.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
