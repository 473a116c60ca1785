/* for-in loops with bounds from the packet (P4_16 1.2.5): a range lo .. hi of bit<8> and of
 * int<8>, both ends included, empty when lo > hi, ending at the type's largest value too; a
 * loop over a header stack; a bit<32> range longer than softswitch's loop bound. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header op_t { bit<8> op; bit<8> lo; bit<8> hi; bit<8> n; bit<16> sum; }
header e_t { bit<8> v; }
struct headers_t { ethernet_t eth; op_t op; e_t[3] e; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.eth);
        transition select(h.eth.ether_type) { 0x9000: op; default: accept; }
    }
    state op { pkt.extract(h.op); transition select(h.op.op) { 3: one; default: accept; } }
    state one { pkt.extract(h.e.next); transition accept; }
}

control VC(inout headers_t h, inout meta_t m) { apply { } }

control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        h.op.n = 0;
        h.op.sum = 0;
        if (h.op.op == 1) {
            for (bit<8> i in h.op.lo .. h.op.hi) {
                h.op.n = h.op.n + 1;
                h.op.sum = h.op.sum + (bit<16>) i;
            }
        } else if (h.op.op == 2) {
            for (int<8> i in (int<8>) h.op.lo .. (int<8>) h.op.hi) {
                h.op.n = h.op.n + 1;
                h.op.sum = h.op.sum + (bit<16>) (int<16>) i;
            }
        } else if (h.op.op == 3) {
            h.e[2].setValid();
            h.e[2].v = 0x40;
            for (e_t x in h.e) {
                if (x.isValid()) { h.op.n = h.op.n + 1; h.op.sum = h.op.sum + (bit<16>) x.v; }
            }
        } else if (h.op.op == 4) {
            for (bit<32> i in 0 .. 32w0xFFFFFFFF) { h.op.n = h.op.n + 1; }
        }
    }
}

control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
