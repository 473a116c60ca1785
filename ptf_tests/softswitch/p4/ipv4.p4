/* IPv4 checksums and parser errors: verify_checksum flags a bad header checksum (sent to port 3
 * untouched); good packets get TTL-1 and UDP dport+1, then new IPv4 and UDP (with payload)
 * checksums; truncated and malformed packets reach ingress with parser_error set and are counted
 * by error kind, then dropped. */
#include <core.p4>
#include <v1model.p4>
#include "common.p4"

/* indices of the parse_result counter */
#define IDX_NO_ERROR 0
#define IDX_TOO_SHORT 1
#define IDX_BAD_VERSION 2
#define IDX_OTHER_ERROR 3
#define IDX_BAD_CHECKSUM 4

error { BadIPv4Version }

header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> total_len; bit<16> identification;
    bit<3> flags; bit<13> frag_offset; bit<8> ttl; bit<8> protocol; bit<16> hdr_checksum;
    bit<32> src; bit<32> dst;
}
header udp_t { bit<16> sport; bit<16> dport; bit<16> len; bit<16> csum; }
struct headers_t { ethernet_t eth; ipv4_t ipv4; udp_t udp; }
struct meta_t { bit<1> fix; }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.eth);
        transition select(h.eth.ether_type) { ETHERTYPE_IPV4: ipv4; default: accept; }
    }
    state ipv4 {
        pkt.extract(h.ipv4);
        verify(h.ipv4.version == 4, error.BadIPv4Version);
        transition select(h.ipv4.protocol) { 17: udp; default: accept; }
    }
    state udp {
        pkt.extract(h.udp);
        transition accept;
    }
}

control VC(inout headers_t h, inout meta_t m) {
    apply {
        verify_checksum(h.ipv4.isValid() && h.ipv4.ihl == 5,
            { h.ipv4.version, h.ipv4.ihl, h.ipv4.diffserv, h.ipv4.total_len, h.ipv4.identification,
              h.ipv4.flags, h.ipv4.frag_offset, h.ipv4.ttl, h.ipv4.protocol, h.ipv4.src, h.ipv4.dst },
            h.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    counter(8, CounterType.packets) parse_result;

    apply {
        if (sm.parser_error == error.NoError) {
            parse_result.count(IDX_NO_ERROR);
        } else if (sm.parser_error == error.PacketTooShort) {
            parse_result.count(IDX_TOO_SHORT);
        } else if (sm.parser_error == error.BadIPv4Version) {
            parse_result.count(IDX_BAD_VERSION);
        } else {
            parse_result.count(IDX_OTHER_ERROR);
        }
        if (sm.parser_error != error.NoError || !h.ipv4.isValid()) {
            mark_to_drop(sm);
        } else if (sm.checksum_error == 1) {
            parse_result.count(IDX_BAD_CHECKSUM);
            sm.egress_spec = 3;
        } else {
            h.ipv4.ttl = h.ipv4.ttl - 1;
            if (h.udp.isValid()) { h.udp.dport = h.udp.dport + 1; }   /* forces a new UDP checksum */
            m.fix = 1;
            sm.egress_spec = 2;
        }
    }
}

control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }

control CC(inout headers_t h, inout meta_t m) {
    apply {
        update_checksum(h.ipv4.isValid() && m.fix == 1,
            { h.ipv4.version, h.ipv4.ihl, h.ipv4.diffserv, h.ipv4.total_len, h.ipv4.identification,
              h.ipv4.flags, h.ipv4.frag_offset, h.ipv4.ttl, h.ipv4.protocol, h.ipv4.src, h.ipv4.dst },
            h.ipv4.hdr_checksum, HashAlgorithm.csum16);
        update_checksum_with_payload(h.udp.isValid() && m.fix == 1,
            { h.ipv4.src, h.ipv4.dst, 8w0, h.ipv4.protocol, h.udp.len, h.udp.sport, h.udp.dport, h.udp.len },
            h.udp.csum, HashAlgorithm.csum16);
    }
}

control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.eth); pkt.emit(h.ipv4); pkt.emit(h.udp); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
