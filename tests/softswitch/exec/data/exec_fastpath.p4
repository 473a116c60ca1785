/* Every way a packet leaves the generated fast path of the packet loop (softswitch/exec/fastpath.py)
 * for the general one: tag.kind picks it. No resubmit or recirculate, so the fast path is built. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> etype; }
header tag_t { bit<8> kind; bit<8> arg; bit<32> seen; bit<32> qdepth; }
struct headers_t { eth_t eth; tag_t tag; }
struct meta_t { @field_list(1) bit<32> mark; bit<8> scratch; }
struct learn_t { bit<48> src; bit<9> port; }

parser P(packet_in pk, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pk.extract(h.eth);
        transition select(h.eth.etype) { 0x9000: tag; default: accept; }
    }
    state tag {
        pk.extract(h.tag);
        verify(h.tag.kind != 0xEE, error.NoMatch);
        transition accept;
    }
}
control VC(inout headers_t h, inout meta_t m) { apply { } }
control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        // what a recycled object still holds would show here: user metadata and parser_error
        bit<8> perr = sm.parser_error == error.NoError ? 8w0 : (sm.parser_error == error.PacketTooShort ? 8w1 : 8w2);
        h.eth.src = m.scratch ++ (bit<8>) sm.instance_type ++ perr ++ 8w0 ++ m.mark[15:0];
        m.scratch = 0x5A;
        sm.egress_spec = 1;
        if (!h.tag.isValid()) { return; }
        if (h.tag.kind == 1) { mark_to_drop(sm); }
        else if (h.tag.kind == 2) { sm.mcast_grp = (bit<16>) h.tag.arg; }
        else if (h.tag.kind == 3) { m.mark = 0xC0FFEE; clone_preserving_field_list(CloneType.I2E, (bit<32>) h.tag.arg, 1); }
        else if (h.tag.kind == 4) { digest<learn_t>(1, { h.eth.src, sm.ingress_port }); }
        else if (h.tag.kind == 5) { truncate(20); }
        else if (h.tag.kind == 6) { assert(false); }
        else if (h.tag.kind == 7) { sm.priority = 5; sm.egress_spec = (bit<9>) h.tag.arg; }
    }
}
control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        if (!h.tag.isValid()) { return; }
        h.tag.seen = (bit<16>) sm.instance_type ++ sm.egress_rid;
        h.tag.qdepth = (bit<32>) sm.egress_port;
        if (h.tag.kind == 8 && sm.instance_type == 0) {
            m.mark = 0xBEEF;
            clone_preserving_field_list(CloneType.E2E, (bit<32>) h.tag.arg, 1);
        } else if (h.tag.kind == 9) { mark_to_drop(sm); }
        else if (h.tag.kind == 10) { assert(false); }
        else if (h.tag.kind == 11) { truncate(18); }
    }
}
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pk, in headers_t h) { apply { pk.emit(h.eth); pk.emit(h.tag); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
