/* tuple<...> locals (p4c's issue2201 samples): a list initialiser takes its element types from
 * the declared tuple type, and a tuple can be copied, assigned a list, compared and used as
 * hash or log_msg data. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header op_t { bit<8> op; bit<8> a; bit<8> b; bit<8> r; bit<16> w; bit<8> c; }
struct headers_t { ethernet_t eth; op_t op; }
struct meta_t { bit<8> unused; }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.eth);
        transition select(h.eth.ether_type) { 0x9000: op; default: accept; }
    }
    state op { pkt.extract(h.op); transition accept; }
}

control VC(inout headers_t h, inout meta_t m) { apply { } }

control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        // {1, 2} is {4w1, 4w2} here, {3, true, -1} is {bit<8>, bool, int<7>}
        tuple<bit<4>, bit<4>> q = {1, 2};
        hash(h.op.b, HashAlgorithm.identity, 8w0, q, 16w256);
        tuple<bit<8>, bool, int<7>> s = {3, true, -1};
        hash(h.op.w, HashAlgorithm.identity, 16w0, s, 32w65536);
        tuple<bit<8>, bit<8>> t = {h.op.a, 2};
        tuple<bit<8>, bit<8>> u;
        u = t;                    // a copy: the next assignment does not change u
        t = {9, 2};
        if (u == t) { h.op.r = 0xAA; } else { h.op.r = 0xBB; }
        if (u != {9, 2}) { h.op.c = 1; }  // the list typed by u
        log_msg("u = {}", {u});
    }
}

control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.eth); pkt.emit(h.op); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
