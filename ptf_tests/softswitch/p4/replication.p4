/* Packet replication: clone I2E and E2E with a preserved field list (and a field that is not
 * preserved), clone-session truncation, recirculation with a preserved field, truncate(), and
 * multicast groups whose egress_rid is written into each copy. */
#include <core.p4>
#include <v1model.p4>
#include "common.p4"

#define OP_CLONE_I2E 1
#define OP_CLONE_E2E 2
#define OP_RECIRC 3
#define OP_TRUNCATE 4
#define OP_MCAST 5
#define OP_MCAST_PRUNE 6
#define OP_RESUBMIT 7

header r_t {
    bit<8> op; bit<8> arg; bit<8> inst; bit<8> passes;
    bit<16> rid; bit<16> port; bit<32> kept; bit<32> lost;
}
struct headers_t { ethernet_t eth; r_t r; }
struct meta_t {
    @field_list(1) bit<32> kept;
    bit<32> lost;                        /* in no field list: a clone starts with 0 */
}

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.eth);
        transition select(h.eth.ether_type) { ETHERTYPE_TEST: r; default: accept; }
    }
    state r { pkt.extract(h.r); transition accept; }
}

control VC(inout headers_t h, inout meta_t m) { apply { } }

control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        if (!h.r.isValid()) { mark_to_drop(sm); return; }
        sm.egress_spec = 2;
        if (sm.instance_type == 4) {             /* recirculated: the field list came along */
            h.r.kept = m.kept;
        }
        if (h.r.op == OP_RECIRC || h.r.op == OP_RESUBMIT) {   /* egress sees NORMAL again */
            h.r.lost = 32w0x66660000 | (bit<32>) sm.instance_type;
        }
        if (h.r.op == OP_RESUBMIT) {
            if (sm.instance_type == 6) {         /* resubmitted: the original packet, field list kept */
                h.r.kept = m.kept;
                h.r.arg = (bit<8>) sm.ingress_port;   /* 0: bmv2 resets it on the resubmitted copy */
            } else {
                h.r.passes = 0x99;               /* lost: resubmit starts from the original packet */
                m.kept = 32w0x77770000 | (bit<32>) h.r.arg;
                resubmit_preserving_field_list(1);
            }
        }
        if (h.r.op == OP_CLONE_I2E) {
            m.kept = 32w0x11110000 | (bit<32>) h.r.arg;
            m.lost = 32w0x22220000;
            clone_preserving_field_list(CloneType.I2E, (bit<32>) h.r.arg, 1);
        } else if (h.r.op == OP_TRUNCATE) {
            truncate((bit<32>) h.r.arg);
        } else if (h.r.op == OP_MCAST || h.r.op == OP_MCAST_PRUNE) {
            sm.mcast_grp = (bit<16>) h.r.arg;
        }
    }
}

control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.r.inst = (bit<8>) sm.instance_type;
        h.r.rid = sm.egress_rid;
        h.r.port = (bit<16>) sm.egress_port;
        if (h.r.op == OP_CLONE_I2E) {
            h.r.kept = m.kept;
            h.r.lost = m.lost;
        } else if (h.r.op == OP_CLONE_E2E) {
            if (sm.instance_type == 0) {
                m.kept = 32w0x33330000 | (bit<32>) h.r.arg;
                m.lost = 32w0x44440000;
                clone_preserving_field_list(CloneType.E2E, (bit<32>) h.r.arg, 1);
            } else {
                h.r.kept = m.kept;
                h.r.lost = m.lost;
            }
        } else if (h.r.op == OP_MCAST_PRUNE) {
            if (sm.egress_port == sm.ingress_port) { mark_to_drop(sm); }   /* no copy back */
        } else if (h.r.op == OP_RECIRC) {
            h.r.passes = h.r.passes + 1;
            if (h.r.passes < h.r.arg) {
                m.kept = 32w0x55550000 | (bit<32>) h.r.passes;
                recirculate_preserving_field_list(1);
            }
        }
    }
}

control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.eth); pkt.emit(h.r); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
