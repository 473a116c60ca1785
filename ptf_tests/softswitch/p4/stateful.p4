/* Registers (data-plane read/write), an indirect counter indexed from the packet, a direct
 * counter on a table, and a two-rate three-colour packet meter whose colour is written back. */
#include <core.p4>
#include <v1model.p4>
#include "common.p4"

#define OP_NONE 0
#define OP_REG_WRITE 1
#define OP_REG_READ 2
#define OP_METER 3
#define OP_DIRECT_METER 4

header s_t { bit<8> op; bit<8> idx; bit<8> color; bit<8> hit; bit<32> value; }
struct headers_t { ethernet_t eth; s_t s; }
struct meta_t { }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.eth);
        transition select(h.eth.ether_type) { ETHERTYPE_TEST: s; default: accept; }
    }
    state s { pkt.extract(h.s); transition accept; }
}

control VC(inout headers_t h, inout meta_t m) { apply { } }

control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    register<bit<32>>(16) cells;
    counter(16, CounterType.packets_and_bytes) per_idx;
    meter(4, MeterType.packets) rate;
    direct_counter(CounterType.packets_and_bytes) dc;
    direct_meter<bit<8>>(MeterType.packets) dm;

    action count_hit() { h.s.hit = 1; }   /* the direct counter counts every hit */
    table t_dc { key = { h.s.idx: exact; } actions = { count_hit; NoAction; }
                 default_action = NoAction(); counters = dc; }

    action read_color() { dm.read(h.s.color); }
    table t_dm { key = { h.s.idx: exact; } actions = { read_color; NoAction; }
                 default_action = NoAction(); meters = dm; }

    apply {
        sm.egress_spec = 2;
        if (!h.s.isValid()) { mark_to_drop(sm); return; }
        per_idx.count((bit<32>) h.s.idx);
        t_dc.apply();
        if (h.s.op == OP_REG_WRITE) {
            cells.write((bit<32>) h.s.idx, h.s.value);
        } else if (h.s.op == OP_REG_READ) {
            cells.read(h.s.value, (bit<32>) h.s.idx);
        } else if (h.s.op == OP_METER) {
            rate.execute_meter((bit<32>) h.s.idx, h.s.color);
        } else if (h.s.op == OP_DIRECT_METER) {
            h.s.color = 0xFF;                    /* a miss leaves this marker */
            t_dm.apply();
        }
    }
}

control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.eth); pkt.emit(h.s); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
