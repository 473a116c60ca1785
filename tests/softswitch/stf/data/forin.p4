#include <core.p4>
#include <v1model.p4>
// for-in loops (P4_16 1.2.5): over a range 'lo .. hi' (both ends included, bounds evaluated
// once, empty when lo > hi, the variable a fresh copy each round) and over a header stack
// (every element, valid or not, each a copy); break, continue, nesting; loops in actions and in
// the apply block; static_assert as a statement and as a constant's initialiser.
header h_t { bit<8> n; bit<8> op; bit<16> r; }
header s_t { bit<8> v; }
struct H { h_t h; s_t[4] s; }
struct M { }
const bool sizes_ok = static_assert(4 == 4, "four elements");
parser P(packet_in pk, out H h, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(h.h); transition select(h.h.op) { 7: two; default: four; } }
    state two { pk.extract(h.s[0]); pk.extract(h.s[1]); transition accept; }
    state four { pk.extract(h.s[0]); pk.extract(h.s[1]); pk.extract(h.s[2]);
                 pk.extract(h.s[3]); transition accept; }
}
control VC(inout H h, inout M m) { apply { } }
bit<8> bump(inout bit<8> x) { x = x + 1; return x; }
bit<8> popcount(in bit<8> val) {  // a return inside a for-in loop
    bit<8> n = 0;
    bit<8> v = val;
    for (bit<8> k in 1 .. 8) {
        if (v == 0) { return n; }
        n = n + 1;
        v = v & (v - 1);
    }
    return n;
}
control I(inout H h, inout M m, inout standard_metadata_t sm) {
    action sum_range() {  // 1 + 2 + ... + n
        h.h.r = 0;
        for (bit<8> i in 1 .. h.h.n) { h.h.r = h.h.r + (bit<16>) i; }
    }
    action to_max() {  // the range ends at the type's largest value: 252..255, four rounds
        h.h.r = 0;
        for (bit<8> i in 8w252 .. 8w255) { h.h.r = h.h.r + 1; }
    }
    action brk_cont() {  // even i below n, stop at 9: the sum of the even ones
        h.h.r = 0;
        for (bit<8> i in 0 .. 20) {
            if (i == 9) { break; }
            if ((i & 1) == 1) { continue; }
            if (i >= h.h.n) { break; }
            h.h.r = h.h.r + (bit<16>) i;
        }
    }
    action write_var() {  // writing the variable changes neither the range nor the rounds
        h.h.r = 0;
        for (bit<8> i in 0 .. 3) { i = i + 100; h.h.r = h.h.r + (bit<16>) i; }
    }
    action bounds_once() {  // the bounds are read once: the body's change of n does not count
        h.h.r = 0;
        for (bit<8> i in 1 .. h.h.n) { h.h.n = 1; h.h.r = h.h.r + 1; }
    }
    action nested() {
        h.h.r = 0;
        for (bit<8> i in 1 .. h.h.n) {
            for (bit<8> j in i .. h.h.n) { h.h.r = h.h.r + 1; }
        }
    }
    action signed_range() {  // int<8> -3 .. 2: six rounds, the sum -3
        int<8> acc = 0;
        for (int<8> i in -3 .. 2) { acc = acc + i; }
        h.h.r = (bit<16>) (bit<8>) acc;
    }
    action call_once() {  // a function call in a bound runs once, before the first round
        bit<8> c = 0;
        h.h.r = 0;
        for (bit<8> i in 1 .. bump(c)) { h.h.r = h.h.r + 1; }
        h.h.r = h.h.r + ((bit<16>) c << 8);
    }
    action over_list() {  // a list's elements are read once, before the first round
        h.h.r = 0;
        for (bit<8> x in {h.h.n, 8w2, 3}) { h.h.n = 9; h.h.r = h.h.r * 10 + (bit<16>) x; }
    }
    action pop() { h.h.r = (bit<16>) popcount(h.h.n); }
    table t {
        key = { h.h.op: exact; }
        actions = { sum_range; to_max; brk_cont; write_var; bounds_once; nested; signed_range;
                    call_once; over_list; pop; NoAction; }
        default_action = NoAction();
    }
    apply {
        static_assert(true);
        t.apply();
        if (h.h.op == 7 || h.h.op == 9) {
            // every element: on op 7 two valid ones and two invalid ones
            bit<8> total = 0;
            bit<8> valid = 0;
            for (s_t e in h.s) {
                if (e.isValid()) { valid = valid + 1; total = total + e.v; }
                e.v = 0;  // a copy: the stack keeps its value
            }
            h.h.r = (bit<16>) valid << 8 | (bit<16>) total;
        }
        sm.egress_spec = 1;
    }
}
control E(inout H h, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H h, inout M m) { apply { } }
control D(packet_out pk, in H h) { apply { pk.emit(h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
