/* A small SRv6 uSID fabric switch: headers, a parser with a segment-list loop, one control per
 * feature instantiated from the ingress, const entries, packet-in/out. */
#include <core.p4>
#include <v1model.p4>

#define CPU_PORT 255
const bit<16> ETHERTYPE_IPV6 = 0x86dd;
const bit<8> PROTO_SRV6 = 43;
const bit<8> PROTO_UDP = 17;
const bit<8> PROTO_IPV6 = 41;

typedef bit<9> port_t;
typedef bit<128> ipv6_addr_t;

@controller_header("packet_in")
header packet_in_t { port_t ingress_port; bit<7> _pad; bit<8> reason; }
@controller_header("packet_out")
header packet_out_t { port_t egress_port; bit<7> _pad; }
header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header ipv6_t { bit<4> version; bit<8> tc; bit<20> flow_label; bit<16> payload_len;
                bit<8> next_hdr; bit<8> hop_limit; ipv6_addr_t src; ipv6_addr_t dst; }
header srh_t { bit<8> next_hdr; bit<8> hdr_ext_len; bit<8> routing_type; bit<8> segments_left;
               bit<8> last_entry; bit<8> flags; bit<16> tag; }
header srh_seg_t { ipv6_addr_t sid; }
header udp_t { bit<16> sport; bit<16> dport; bit<16> len; bit<16> csum; }

struct headers_t {
    packet_out_t pkt_out; packet_in_t pkt_in; ethernet_t eth; ipv6_t ipv6; srh_t srh;
    srh_seg_t[4] segs; ipv6_t inner; udp_t udp;
}
struct local_meta_t { bit<8> segs_left; bool is_usid; bit<16> l4_sport; bit<32> ecmp_hash; }

parser FabricParser(packet_in pkt, out headers_t hdr, inout local_meta_t lm,
                    inout standard_metadata_t sm) {
    state start {
        transition select(sm.ingress_port) { CPU_PORT: parse_pkt_out; default: parse_eth; }
    }
    state parse_pkt_out { pkt.extract(hdr.pkt_out); transition parse_eth; }
    state parse_eth {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.ether_type) { ETHERTYPE_IPV6: parse_ipv6; default: accept; }
    }
    state parse_ipv6 {
        pkt.extract(hdr.ipv6);
        transition select(hdr.ipv6.next_hdr) {
            PROTO_SRV6: parse_srh; PROTO_IPV6: parse_inner; PROTO_UDP: parse_udp; default: accept;
        }
    }
    state parse_srh {
        pkt.extract(hdr.srh);
        lm.segs_left = hdr.srh.last_entry + 1;
        transition parse_segs;
    }
    state parse_segs {
        pkt.extract(hdr.segs.next);
        lm.segs_left = lm.segs_left - 1;
        transition select(lm.segs_left) { 0: parse_after_srh; default: parse_segs; }
    }
    state parse_after_srh {
        transition select(hdr.srh.next_hdr) { PROTO_IPV6: parse_inner; PROTO_UDP: parse_udp; default: accept; }
    }
    state parse_inner {
        pkt.extract(hdr.inner);
        transition select(hdr.inner.next_hdr) { PROTO_UDP: parse_udp; default: accept; }
    }
    state parse_udp { pkt.extract(hdr.udp); lm.l4_sport = hdr.udp.sport; transition accept; }
}

control NoVerify(inout headers_t hdr, inout local_meta_t lm) { apply { } }

control PacketIo(inout headers_t hdr, inout standard_metadata_t sm, out bool done) {
    apply {
        done = false;
        if (hdr.pkt_out.isValid()) {
            sm.egress_spec = hdr.pkt_out.egress_port;
            hdr.pkt_out.setInvalid();
            done = true;
        }
    }
}

control Srv6(inout headers_t hdr, inout local_meta_t lm, inout standard_metadata_t sm) {
    direct_counter(CounterType.packets_and_bytes) usid_un_counter;
    action usid_un() {
        hdr.ipv6.dst = (hdr.ipv6.dst & 0xffffffff000000000000000000000000) |
                       ((hdr.ipv6.dst << 16) & 0x00000000ffffffffffffffffffffffff);
        lm.is_usid = true;
        usid_un_counter.count();
    }
    action usid_miss() { usid_un_counter.count(); }
    @name("my_sid") table usid_table {
        key = { hdr.ipv6.dst: ternary @format(IPV6_ADDRESS) @name("ipv6_dst"); }
        actions = { usid_un; @defaultonly usid_miss; }
        default_action = usid_miss();
        counters = usid_un_counter;
    }
    apply { if (hdr.ipv6.isValid()) { usid_table.apply(); } }
}

control Routing(inout headers_t hdr, inout local_meta_t lm, inout standard_metadata_t sm) {
    action_selector(HashAlgorithm.crc16, 1024, 16) ecmp_sel;
    action set_port(port_t port, bit<48> dmac) { sm.egress_spec = port; hdr.eth.dst = dmac; }
    action drop() { mark_to_drop(sm); }
    table route_usid {
        key = { hdr.ipv6.dst: lpm; hdr.ipv6.flow_label: selector; lm.l4_sport: selector; }
        actions = { set_port; drop; }
        implementation = ecmp_sel;
        size = 4096;
    }
    table my_station {
        key = { hdr.eth.dst: exact; }
        actions = { NoAction; drop; }
        const default_action = drop();
        const entries = { 0x00000000aa01: NoAction(); 0xffffffffffff: drop(); }
    }
    apply {
        if (my_station.apply().hit) {
            hash(lm.ecmp_hash, HashAlgorithm.crc32, 32w0,
                 { hdr.ipv6.src, hdr.ipv6.dst, hdr.ipv6.flow_label, lm.l4_sport }, 32w0xffffffff);
            switch (route_usid.apply().action_run) {
                drop: { exit; }
                default: { hdr.ipv6.hop_limit = hdr.ipv6.hop_limit - 1; }
            }
        }
    }
}

control FabricIngress(inout headers_t hdr, inout local_meta_t lm, inout standard_metadata_t sm) {
    PacketIo() packet_io;
    Srv6() srv6;
    Routing() routing;
    counter(256, CounterType.packets) rx_port_counter;
    apply {
        mark_to_drop(sm);
        rx_port_counter.count((bit<32>) sm.ingress_port);
        bool done;
        packet_io.apply(hdr, sm, done);
        if (!done) {
            srv6.apply(hdr, lm, sm);
            routing.apply(hdr, lm, sm);
        }
    }
}

control FabricEgress(inout headers_t hdr, inout local_meta_t lm, inout standard_metadata_t sm) {
    apply {
        if (sm.egress_port == CPU_PORT) {
            hdr.pkt_in.setValid();
            hdr.pkt_in.ingress_port = sm.ingress_port;
            hdr.pkt_in.reason = 1;
        }
        if (hdr.ipv6.isValid() && sm.deq_qdepth > 16 && hdr.ipv6.tc[1:0] != 0) {
            hdr.ipv6.tc[1:0] = 3;
        }
    }
}

control FabricComputeChecksum(inout headers_t hdr, inout local_meta_t lm) { apply { } }

control FabricDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.pkt_in); pkt.emit(hdr.eth); pkt.emit(hdr.ipv6); pkt.emit(hdr.srh);
        pkt.emit(hdr.segs); pkt.emit(hdr.inner); pkt.emit(hdr.udp);
    }
}

V1Switch(FabricParser(), NoVerify(), FabricIngress(), FabricEgress(), FabricComputeChecksum(),
         FabricDeparser()) main;
