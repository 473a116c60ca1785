/* Indexed counters and registers updated by the data plane (issue 16: written out in the
 * generated code as stores into the runtime objects' value lists). */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> idx; bit<8> val; int<8> sval; bit<8> got; int<8> sgot; bit<16> wide; }
struct Headers { h_t h; }
struct Meta { }

parser p(packet_in pkt, out Headers h, inout Meta m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.h); transition accept; }
}
control ingress(inout Headers h, inout Meta m, inout standard_metadata_t sm) {
    counter(4, CounterType.packets_and_bytes) by_idx;
    counter(2, CounterType.packets) by_port;
    register<bit<8>>(4) r8;
    register<int<8>>(4) rs;
    register<bit<4>>(4) r4;
    apply {
        sm.egress_spec = 1;
        by_idx.count((bit<32>)h.h.idx);
        by_port.count((bit<32>)sm.ingress_port);
        r8.read(h.h.got, (bit<32>)h.h.idx);
        rs.read(h.h.sgot, (bit<32>)h.h.idx);
        r8.write((bit<32>)h.h.idx, h.h.val);
        rs.write((bit<32>)h.h.idx, h.h.sval);
        bit<4> old;
        r4.read(old, (bit<32>)h.h.idx);
        r4.write((bit<32>)h.h.idx, old + (bit<4>)h.h.val);
        h.h.wide = (bit<16>)old;
    }
}
control vrfy(inout Headers h, inout Meta m) { apply { } }
control update(inout Headers h, inout Meta m) { apply { } }
control egress(inout Headers h, inout Meta m, inout standard_metadata_t sm) { apply { } }
control deparser(packet_out pkt, in Headers h) { apply { pkt.emit(h); } }
V1Switch(p(), vrfy(), ingress(), egress(), update(), deparser()) main;
