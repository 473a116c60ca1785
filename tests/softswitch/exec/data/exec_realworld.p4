// Constructs of real-world v1model programs (the P4 tutorials, p4-guide, SAI P4) that softswitch
// rejected or mis-ran, each reduced to the smallest program of this project's own.
#include <core.p4>
#include <v1model.p4>

// p4c's v1model.p4 declares PortId_t only when V1MODEL_VERSION >= 20200408 (the default is
// 20180101), so a program may declare its own, as the tutorials' flowcache exercise does.
typedef bit<9> PortId_t;

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header op_t { bit<8> op; bit<8> a; bit<32> version; }

struct headers_t { eth_t eth; op_t op; }
struct meta_t { PortId_t port; }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.eth);
        pkt.extract(h.op);
        transition accept;
    }
}

control NoCk(inout headers_t h, inout meta_t m) { apply { } }

control Ing(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    action fwd(PortId_t port) { m.port = port; sm.egress_spec = port; }
    action drop() { mark_to_drop(sm); }
    table t {
        key = { h.op.a : exact; }
        actions = { fwd; drop; }
        default_action = drop();
    }
    apply {
        if (h.op.op == 1) {
            t.apply();
        } else if (h.op.op == 2) {
            h.op.version = __v1model_version;
            sm.egress_spec = 3;
        }
    }
}

control Eg(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }

control Dep(packet_out pkt, in headers_t h) {
    apply { pkt.emit(h.eth); pkt.emit(h.op); }
}

V1Switch(P(), NoCk(), Ing(), Eg(), NoCk(), Dep()) main;
