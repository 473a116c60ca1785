/* register<E> of a serializable enum (p4c's register-serenum-bmv2): bmv2 holds the underlying
 * bit<16>; P4Info types the register by the enum, as p4c does. */
#include <core.p4>
#include <v1model.p4>

enum bit<16> EthTypes { IPv4 = 0x0800, ARP = 0x0806, IPv6 = 0x86DD }
header ethernet_t { bit<48> dst; bit<48> src; EthTypes eth_type; }
header out_t { EthTypes prev; bit<8> is_arp; }
struct Headers { ethernet_t eth; out_t o; }
struct Meta { }

parser p(packet_in pkt, out Headers h, inout Meta m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.eth); transition accept; }
}
control ingress(inout Headers h, inout Meta m, inout standard_metadata_t sm) {
    register<EthTypes>(4) last_type;
    apply {
        sm.egress_spec = 1;
        EthTypes prev;
        last_type.read(prev, (bit<32>)sm.ingress_port);
        last_type.write((bit<32>)sm.ingress_port, h.eth.eth_type);
        h.o.setValid();
        h.o.prev = prev;
        h.o.is_arp = prev == EthTypes.ARP ? 8w1 : 8w0;
    }
}
control vrfy(inout Headers h, inout Meta m) { apply { } }
control update(inout Headers h, inout Meta m) { apply { } }
control egress(inout Headers h, inout Meta m, inout standard_metadata_t sm) { apply { } }
control deparser(packet_out pkt, in Headers h) { apply { pkt.emit(h); } }
V1Switch(p(), vrfy(), ingress(), egress(), update(), deparser()) main;
