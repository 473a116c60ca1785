#include <core.p4>
#include <v1model.p4>
// for loops: a sum up to a packet field, nested loops, break, continue, a condition calling a
// function, and a loop in the apply block over a header stack index.
header h_t { bit<8> n; bit<8> op; bit<16> r; }
header s_t { bit<8> v; }
struct H { h_t h; s_t[4] s; }
struct M { }
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(h.h); pk.extract(h.s[0]); pk.extract(h.s[1]); pk.extract(h.s[2]);
                  pk.extract(h.s[3]); transition accept; }
}
control VC(inout H h, inout M m) { apply { } }
bit<8> limit(in bit<8> x) { return x + 1; }
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    action sum_to_n() {
        h.h.r = 0;
        for (bit<8> i = 1; i <= h.h.n; i = i + 1) { h.h.r = h.h.r + (bit<16>) i; }
    }
    action nested() {
        h.h.r = 0;
        for (bit<8> i = 0; i < h.h.n; i = i + 1) {
            for (bit<8> j = 0; j < h.h.n; j = j + 1) { h.h.r = h.h.r + 1; }
        }
    }
    action brk_cont() {
        h.h.r = 0;
        for (bit<8> i = 0, bit<8> k = 0; i < 20; i = i + 1, k = k + 2) {
            if (i == h.h.n) { break; }
            if ((i & 1) == 1) { continue; }
            h.h.r = h.h.r + (bit<16>) k;
        }
    }
    action call_in_cond() {
        h.h.r = 0;
        for (bit<8> i = 0; i < limit(h.h.n); i = i + 1) { h.h.r = h.h.r + 10; }
    }
    table t {
        key = { h.h.op: exact; }
        actions = { sum_to_n; nested; brk_cont; call_in_cond; NoAction; }
        default_action = NoAction();
    }
    apply {
        t.apply();
        if (h.h.op == 9) {
            bit<8> total = 0;
            for (bit<32> i = 0; i < 4; i = i + 1) { total = total + h.s[i].v; }
            h.h.r = (bit<16>) total;
        }
        sm.egress_spec = 1;
    }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pk, in H h) { apply { pk.emit(h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
