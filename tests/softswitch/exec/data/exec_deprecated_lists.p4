/* The deprecated v1model calls with a non-empty list (p4c's issue1001 and issue430-1 samples):
 * clone3(type, session, {fields}) and resubmit({fields}) preserve the user-metadata fields the
 * list names, as the _preserving_field_list forms do for a @field_list index (values at the end
 * of ingress), standard_metadata fields too (ONOS fabric.p4's clone3(I2E, id,
 * {standard_metadata.ingress_port}) keeps the port a CPU clone's packet-in reports; bmv2 zeroes it
 * otherwise); digest(receiver, {list}) is a digest of a tuple type named digest_0, digest_1. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header op_t { bit<8> op; bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<8> e; }
struct headers_t { ethernet_t eth; op_t op; }
struct inner_t { bit<8> c; bit<8> d; }
struct meta_t { bit<8> a; bit<8> b; inner_t inr; bit<8> rounds; }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.eth);
        transition select(h.eth.ether_type) { 0x9000: op; default: accept; }
    }
    state op { pkt.extract(h.op); transition accept; }
}

control VC(inout headers_t h, inout meta_t m) { apply { } }

control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    meta_t local_copy;
    apply {
        sm.egress_spec = 1;
        if (h.op.op == 1) {
            m.a = h.op.a;
            m.b = h.op.b;
            m.inr.c = h.op.c;
            m.inr.d = h.op.d;
            // a, the whole of inr, and a local (nothing to carry); b is not preserved
            clone3(CloneType.I2E, 32w5, { m.a, m.inr, local_copy });
            m.a = m.a + 1;  // the clone sees the value at the end of ingress, as bmv2
        } else if (h.op.op == 2) {
            m.rounds = m.rounds + 1;
            m.b = 0x33;
            if (m.rounds < 3) {
                resubmit({ m.rounds });
            }
            h.op.e = m.rounds;
            h.op.b = m.b;
        } else if (h.op.op == 3) {
            digest(1, { h.op.a, h.eth.ether_type });
        } else if (h.op.op == 4) {
            digest(2, { h.op.b });  // one digest per packet in bmv2: the last call's
        } else if (h.op.op == 5) {
            m.a = h.op.a;
            clone3(CloneType.I2E, 32w5, { sm.ingress_port, m.a });
        }
    }
}

control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        if (sm.instance_type == 1) {  // ingress clone
            h.op.a = m.a;
            h.op.b = m.b;
            h.op.c = m.inr.c;
            h.op.d = m.inr.d;
            h.op.e = (bit<8>) sm.ingress_port;  // 0 unless the clone's list preserved it
        }
    }
}
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.eth); pkt.emit(h.op); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
