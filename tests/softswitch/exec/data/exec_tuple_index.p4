/* t[i] of a tuple with a compile-time constant index (P4_16 spec, operations on tuples): read,
 * typed by the element; written when t is an l-value; nested tuples. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header op_t { bit<8> a; bit<8> b; bit<8> r0; bit<16> r1; bit<8> r2; bit<8> r3; bit<8> r4; }
struct headers_t { ethernet_t eth; op_t op; }
struct meta_t { }

const bit<32> K = 1;

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.eth); pkt.extract(h.op); transition accept; }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        tuple<bit<8>, bit<16>, bool> t = {h.op.a, 0x1234, true};
        h.op.r0 = t[0] + 1;              // bit<8>: wraps at 256
        h.op.r1 = t[K];                  // a constant's value as the index
        if (t[2]) { h.op.r2 = 7; }
        t[0] = h.op.b;                   // a write changes only that element
        t[1] = t[1] + 1;
        h.op.r3 = t[0] ^ (bit<8>)t[1];
        tuple<tuple<bit<8>, bit<8>>, bit<8>> n = {{1, 2}, 3};
        n[0][1] = h.op.a;
        h.op.r4 = n[0][1] + n[1] + n[0][0];
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.eth); pkt.emit(h.op); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
