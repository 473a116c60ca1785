/* parser.p4 -- parser, checksum controls and deparser.
 *
 *   [packet_out (from the CPU port)] / Ethernet
 *     / IPv4 / UDP ...
 *     / IPv6 [/ Hop-by-Hop: telemetry | any other (<= 128 bytes)] [/ Destination Options (<= 128 bytes)]
 *            [/ SRH + up to 4 segments [+ TLVs, <= 120 bytes]] [/ inner IPv6]
 *            / UDP [/ BTH [/ RETH [/ ImmDt]] | [/ AETH]]   (BTH only on UDP port 4791)
 * (RFC 8200 4.1 order: Hop-by-Hop first, Destination Options for the SRH's segment endpoints before
 * the routing header.)  Options headers other than the telemetry one are carried through, not read.
 *
 * Malformed headers fail a `verify`: the packet reaches ingress with parser_error set and is
 * dropped there with DROP_REASON_PARSER_ERROR (bmv2 semantics: a parser error does not drop).
 * lmd.ip_proto ends as the last next-header value the parser followed (UDP behind telemetry or an
 * SRH, the inner IPv6's in SRv6 mode), so telemetry_watch and the ECMP hash see the upper layer.
 */
#ifndef MRC_PARSER_P4
#define MRC_PARSER_P4

#include "headers.p4"

parser mrc_parser(packet_in packet,
                  out headers_t hdr,
                  inout local_metadata_t lmd,
                  inout standard_metadata_t std_md) {

    state start {
        transition select(std_md.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }

    state parse_packet_out {
        packet.extract(hdr.cpu_out);
        transition parse_ethernet;
    }

    state parse_ethernet {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV6: parse_ipv6;
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }

    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        verify(hdr.ipv4.version == 4, error.Ipv4BadVersion);
        /* options would make the header checksum we recompute wrong: not supported */
        verify(hdr.ipv4.ihl == 5, error.Ipv4OptionsUnsupported);
        lmd.flow_src = (ipv6_addr_t) hdr.ipv4.src_addr;
        lmd.flow_dst = (ipv6_addr_t) hdr.ipv4.dst_addr;
        lmd.ip_proto = hdr.ipv4.protocol;
        /* A fragment (MF set or an offset) is routed on its IPv4 header alone: a later fragment's
         * first bytes are payload, not a UDP header, and every fragment must hash alike. */
        transition select(hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (3w0 &&& 3w1, 13w0, PROTO_UDP): parse_udp;  /* MF (the low flag bit) clear */
            default: accept;
        }
    }

    state parse_ipv6 {
        packet.extract(hdr.ipv6);
        verify(hdr.ipv6.version == 6, error.Ipv6BadVersion);
        lmd.flow_src = hdr.ipv6.src_addr;
        lmd.flow_dst = hdr.ipv6.dst_addr;
        lmd.ip_proto = hdr.ipv6.next_hdr;
        lmd.flow_label = hdr.ipv6.flow_label;
        transition select(hdr.ipv6.next_hdr) {
            PROTO_HOPOPT: parse_hbh;
            PROTO_DSTOPTS: parse_dest_opts;
            PROTO_ROUTING: parse_srh;
            PROTO_IPV6: parse_inner_ipv6;
            PROTO_UDP: parse_udp;
            default: accept;
        }
    }

    /* Only the telemetry Hop-by-Hop header is interpreted: next_hdr(8) hdr_ext_len(8)=10
     * opt_type(8)=0x3e opt_len(8)=84.  Any other Hop-by-Hop header is extracted whole (up to
     * 8 * (1 + MAX_EXT_UNITS) bytes) and carried through unread, so what follows it (an SRH, the
     * inner packet) is parsed as without it. */
    state parse_hbh {
        transition select(packet.lookahead<bit<32>>()) {
            32w0x000a3e54 &&& 32w0x00ffffff: parse_telemetry;
            default: parse_hbh_opts;
        }
    }

    state parse_hbh_opts {
        packet.extract(hdr.hbh_opts);
        verify(hdr.hbh_opts.hdr_ext_len <= MAX_EXT_UNITS, error.ExtHeaderTooLong);
        lmd.ip_proto = hdr.hbh_opts.next_hdr;
        lmd.ext_units_to_parse = hdr.hbh_opts.hdr_ext_len;
        transition select(hdr.hbh_opts.hdr_ext_len) {
            0: parse_hbh_next;
            default: parse_hbh_unit;
        }
    }

    state parse_hbh_unit {
        packet.extract(hdr.hbh_units.next);
        lmd.ext_units_to_parse = lmd.ext_units_to_parse - 1;
        transition select(lmd.ext_units_to_parse) {
            0: parse_hbh_next;
            default: parse_hbh_unit;
        }
    }

    state parse_hbh_next {
        transition select(hdr.hbh_opts.next_hdr) {
            PROTO_DSTOPTS: parse_dest_opts;
            PROTO_ROUTING: parse_srh;
            PROTO_IPV6: parse_inner_ipv6;
            PROTO_UDP: parse_udp;
            default: accept;
        }
    }

    /* Destination Options ahead of the routing header (or of the upper layer): carried through
     * unread, like a Hop-by-Hop header other than the telemetry one. */
    state parse_dest_opts {
        packet.extract(hdr.dest_opts);
        verify(hdr.dest_opts.hdr_ext_len <= MAX_EXT_UNITS, error.ExtHeaderTooLong);
        lmd.ip_proto = hdr.dest_opts.next_hdr;
        lmd.ext_units_to_parse = hdr.dest_opts.hdr_ext_len;
        transition select(hdr.dest_opts.hdr_ext_len) {
            0: parse_dest_opts_next;
            default: parse_dest_opts_unit;
        }
    }

    state parse_dest_opts_unit {
        packet.extract(hdr.dest_units.next);
        lmd.ext_units_to_parse = lmd.ext_units_to_parse - 1;
        transition select(lmd.ext_units_to_parse) {
            0: parse_dest_opts_next;
            default: parse_dest_opts_unit;
        }
    }

    state parse_dest_opts_next {
        transition select(hdr.dest_opts.next_hdr) {
            PROTO_ROUTING: parse_srh;
            PROTO_IPV6: parse_inner_ipv6;
            PROTO_UDP: parse_udp;
            default: accept;
        }
    }

    state parse_telemetry {
        packet.extract(hdr.hbh);
        packet.extract(hdr.telemetry);
        packet.extract(hdr.telemetry_records.next);
        packet.extract(hdr.telemetry_records.next);
        packet.extract(hdr.telemetry_records.next);
        packet.extract(hdr.telemetry_records.next);
        lmd.ip_proto = hdr.hbh.next_hdr;  /* the upper-layer protocol, not Hop-by-Hop (0) */
        transition select(hdr.hbh.next_hdr) {
            PROTO_DSTOPTS: parse_dest_opts;
            PROTO_ROUTING: parse_srh;
            PROTO_IPV6: parse_inner_ipv6;
            PROTO_UDP: parse_udp;
            default: accept;
        }
    }

    state parse_srh {
        packet.extract(hdr.srh);
        verify(hdr.srh.routing_type == SRH_ROUTING_TYPE, error.SrhUnsupportedType);
        verify(hdr.srh.last_entry < MAX_SRH_SEGMENTS, error.SrhTooManySegments);
        /* RFC 8754 4.3.1.1 / RFC 8986 4.1 S08-S09: last_entry <= max_LE = hdr_ext_len / 2 - 1 and
         * segments_left <= last_entry + 1.  What hdr_ext_len holds beyond the segment list are TLVs
         * (RFC 8754 2.1: padding, HMAC), carried through unread, up to MAX_EXT_UNITS units. */
        verify(hdr.srh.hdr_ext_len >= (hdr.srh.last_entry + 1) << 1, error.SrhMalformed);
        verify(hdr.srh.segments_left <= hdr.srh.last_entry + 1, error.SrhMalformed);
        verify(hdr.srh.hdr_ext_len - ((hdr.srh.last_entry + 1) << 1) <= MAX_EXT_UNITS,
               error.ExtHeaderTooLong);
        lmd.srh_segments_to_parse = hdr.srh.last_entry + 1;
        transition parse_srh_segment;
    }

    state parse_srh_segment {
        packet.extract(hdr.srh_segments.next);
        lmd.srh_segments_to_parse = lmd.srh_segments_to_parse - 1;
        transition select(lmd.srh_segments_to_parse) {
            0: parse_srh_tlvs;
            default: parse_srh_segment;
        }
    }

    state parse_srh_tlvs {
        lmd.ext_units_to_parse = hdr.srh.hdr_ext_len - ((hdr.srh.last_entry + 1) << 1);
        transition select(lmd.ext_units_to_parse) {
            0: parse_srh_next;
            default: parse_srh_tlv_unit;
        }
    }

    state parse_srh_tlv_unit {
        packet.extract(hdr.srh_tlv_units.next);
        lmd.ext_units_to_parse = lmd.ext_units_to_parse - 1;
        transition select(lmd.ext_units_to_parse) {
            0: parse_srh_next;
            default: parse_srh_tlv_unit;
        }
    }

    state parse_srh_next {
        lmd.ip_proto = hdr.srh.next_hdr;  /* the upper-layer protocol, not Routing (43) */
        transition select(hdr.srh.next_hdr) {
            PROTO_IPV6: parse_inner_ipv6;
            PROTO_UDP: parse_udp;
            default: accept;
        }
    }

    state parse_inner_ipv6 {
        packet.extract(hdr.inner_ipv6);
        verify(hdr.inner_ipv6.version == 6, error.Ipv6BadVersion);
        lmd.flow_src = hdr.inner_ipv6.src_addr;
        lmd.flow_dst = hdr.inner_ipv6.dst_addr;
        lmd.ip_proto = hdr.inner_ipv6.next_hdr;
        transition select(hdr.inner_ipv6.next_hdr) {
            PROTO_UDP: parse_udp;
            default: accept;
        }
    }

    state parse_udp {
        packet.extract(hdr.udp);
        lmd.l4_sport = hdr.udp.sport;
        lmd.l4_dport = hdr.udp.dport;
        transition select(hdr.udp.dport) {
            UDP_PORT_ROCEV2: parse_bth;
            default: accept;
        }
    }

    /* MRC data packets carry RETH on every WRITE opcode (each packet names its own address);
     * ImmDt follows RETH on the *_WITH_IMM opcodes; ACKs carry AETH (MRC SACK stays payload). */
    state parse_bth {
        packet.extract(hdr.bth);
        lmd.bth_dest_qp = hdr.bth.dest_qp;
        transition select(hdr.bth.opcode) {
            BTH_OP_WRITE_FIRST: parse_reth;
            BTH_OP_WRITE_MIDDLE: parse_reth;
            BTH_OP_WRITE_LAST: parse_reth;
            BTH_OP_WRITE_LAST_WITH_IMM: parse_reth;
            BTH_OP_WRITE_ONLY: parse_reth;
            BTH_OP_WRITE_ONLY_WITH_IMM: parse_reth;
            BTH_OP_ACK: parse_aeth;
            default: accept;
        }
    }

    state parse_reth {
        packet.extract(hdr.reth);
        transition select(hdr.bth.opcode) {
            BTH_OP_WRITE_LAST_WITH_IMM: parse_immdt;
            BTH_OP_WRITE_ONLY_WITH_IMM: parse_immdt;
            default: accept;
        }
    }

    state parse_immdt {
        packet.extract(hdr.immdt);
        transition accept;
    }

    state parse_aeth {
        packet.extract(hdr.aeth);
        transition accept;
    }
}

/* A router must verify the IPv4 header checksum and discard a packet that fails it (RFC 1812
 * 5.2.2); v1model sets standard_metadata.checksum_error and ingress drops it (stats.p4), since
 * compute_checksum would otherwise give a corrupted header a fresh valid checksum. */
control mrc_verify_checksum(inout headers_t hdr, inout local_metadata_t lmd) {
    apply {
        verify_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn,
              hdr.ipv4.total_len, hdr.ipv4.identification, hdr.ipv4.flags,
              hdr.ipv4.frag_offset, hdr.ipv4.ttl, hdr.ipv4.protocol,
              hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

/* The IPv4 header checksum is recomputed after TTL, DSCP/ECN or length changes. */
control mrc_compute_checksum(inout headers_t hdr, inout local_metadata_t lmd) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn,
              hdr.ipv4.total_len, hdr.ipv4.identification, hdr.ipv4.flags,
              hdr.ipv4.frag_offset, hdr.ipv4.ttl, hdr.ipv4.protocol,
              hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control mrc_deparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.cpu_in);
        packet.emit(hdr.postcard);
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.ipv6);
        packet.emit(hdr.hbh);
        packet.emit(hdr.telemetry);
        packet.emit(hdr.telemetry_records);
        packet.emit(hdr.hbh_opts);
        packet.emit(hdr.hbh_units);
        packet.emit(hdr.dest_opts);
        packet.emit(hdr.dest_units);
        packet.emit(hdr.srh);
        packet.emit(hdr.srh_segments);
        packet.emit(hdr.srh_tlv_units);
        packet.emit(hdr.inner_ipv6);
        packet.emit(hdr.udp);
        packet.emit(hdr.bth);
        packet.emit(hdr.reth);
        packet.emit(hdr.immdt);
        packet.emit(hdr.aeth);
    }
}

#endif  /* MRC_PARSER_P4 */
