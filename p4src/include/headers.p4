/* headers.p4 -- header formats, parser errors and the metadata the controls share. */
#ifndef MRC_HEADERS_P4
#define MRC_HEADERS_P4

#include "define.p4"

/* Parser errors of our own (v1model stores them in standard_metadata.parser_error). */
error {
    Ipv4BadVersion,
    Ipv4OptionsUnsupported,
    Ipv6BadVersion,
    SrhUnsupportedType,
    SrhTooManySegments,
    SrhMalformed,
    ExtHeaderTooLong
}

/* ---- controller headers (P4Runtime packet metadata) -------------------------------------- */
@controller_header("packet_in")
header packet_in_t {
    port_num_t ingress_port;
    bit<7>     _pad;
    packet_in_reason_t reason;
}

@controller_header("packet_out")
header packet_out_t {
    port_num_t egress_port;
    bit<7>     _pad;
}

/* One telemetry hop record [ours], also the body of a postcard (placed right after packet_in). */
header telemetry_record_t {
    bit<32> switch_id;
    bit<16> ingress_port;
    bit<16> egress_port;
    bit<32> ingress_ts_us;
    bit<32> hop_latency_us;
    bit<24> queue_depth;
    bit<8>  queue_id;
}

/* ---- L2 / L3 ------------------------------------------------------------------------------ */
header ethernet_t {
    mac_addr_t dst_addr;
    mac_addr_t src_addr;
    bit<16>    ether_type;
}

header ipv4_t {
    bit<4>      version;
    bit<4>      ihl;
    bit<6>      dscp;
    bit<2>      ecn;
    bit<16>     total_len;
    bit<16>     identification;
    bit<3>      flags;
    bit<13>     frag_offset;
    bit<8>      ttl;
    bit<8>      protocol;
    bit<16>     hdr_checksum;
    ipv4_addr_t src_addr;
    ipv4_addr_t dst_addr;
}

/* Traffic class split into DSCP and ECN, as both are rewritten (trim mark, CE). */
header ipv6_t {
    bit<4>      version;
    bit<6>      dscp;
    bit<2>      ecn;
    bit<20>     flow_label;
    bit<16>     payload_len;
    bit<8>      next_hdr;
    bit<8>      hop_limit;
    ipv6_addr_t src_addr;
    ipv6_addr_t dst_addr;
}

/* Hop-by-Hop header carrying exactly the telemetry option (88 bytes in all, no padding). */
header hbh_t {
    bit<8> next_hdr;
    bit<8> hdr_ext_len;     /* 10 */
}

header telemetry_opt_t {
    bit<8> opt_type;        /* 0x3e */
    bit<8> opt_len;         /* 84 */
    bit<8> max_hops;
    bit<8> hop_count;       /* index of the next record to fill */
    bit<8> flags;
    bit<8> reserved;
}

/* Any other Hop-by-Hop or Destination Options header (RFC 8200 4.3, 4.6): its first 8 bytes, then
 * hdr_ext_len more 8-byte units in a header stack; carried through unchanged. */
header ext_opts_t {
    bit<8>  next_hdr;
    bit<8>  hdr_ext_len;
    bit<48> options;
}

header ext_unit_t {
    bit<64> data;
}

/* Segment Routing Header (RFC 8754); the segment list is a header stack, the TLVs after it (if any)
 * are carried through unread as 8-byte units (ext_unit_t). */
header srh_t {
    bit<8>  next_hdr;
    bit<8>  hdr_ext_len;
    bit<8>  routing_type;
    bit<8>  segments_left;
    bit<8>  last_entry;
    bit<8>  flags;
    bit<16> tag;
}

header srh_segment_t {
    ipv6_addr_t sid;
}

header udp_t {
    bit<16> sport;
    bit<16> dport;
    bit<16> len;
    bit<16> checksum;
}

/* ---- RoCEv2 transport headers -------------------------------------------------------------- */
header bth_t {
    bit<8>  opcode;
    bit<1>  solicited_event;
    bit<1>  mig_req;
    bit<2>  pad_count;
    bit<4>  tver;
    bit<16> pkey;
    bit<1>  fecn;
    bit<1>  becn;
    bit<6>  resv6;
    bit<24> dest_qp;
    bit<1>  ack_req;
    bit<7>  resv7;
    bit<24> psn;
}

header reth_t {
    bit<64> va;
    bit<32> rkey;
    bit<32> dma_len;
}

header immdt_t {
    bit<32> imm;
}

header aeth_t {
    bit<8>  syndrome;
    bit<24> msn;
}

struct headers_t {
    packet_out_t       cpu_out;       /* field names avoid core.p4 type names (softswitch grammar) */
    packet_in_t        cpu_in;
    telemetry_record_t postcard;
    ethernet_t         ethernet;
    ipv4_t             ipv4;
    ipv6_t             ipv6;          /* the outer IPv6 in SRv6 mode, the only one otherwise */
    hbh_t              hbh;
    telemetry_opt_t    telemetry;
    telemetry_record_t[TELEMETRY_RECORDS] telemetry_records;
    ext_opts_t         hbh_opts;      /* a Hop-by-Hop header other than the telemetry one */
    ext_unit_t[MAX_EXT_UNITS] hbh_units;
    ext_opts_t         dest_opts;     /* Destination Options before the SRH (RFC 8200 4.1 order) */
    ext_unit_t[MAX_EXT_UNITS] dest_units;
    srh_t              srh;
    srh_segment_t[MAX_SRH_SEGMENTS] srh_segments;
    ext_unit_t[MAX_EXT_UNITS] srh_tlv_units;  /* the SRH's TLVs (RFC 8754 2.1), unread */
    ipv6_t             inner_ipv6;    /* SRv6 mode: the encapsulated RoCEv2 packet */
    udp_t              udp;
    bth_t              bth;
    reth_t             reth;
    immdt_t            immdt;
    aeth_t             aeth;
}

/* Metadata shared by the controls.  Fields marked @field_list(FL_POSTCARD) survive into the
 * egress clone that becomes a postcard. */
struct local_metadata_t {
    /* flow identity, filled by the parser (inner addresses win in SRv6 mode) */
    ipv6_addr_t flow_src;
    ipv6_addr_t flow_dst;
    bit<8>      ip_proto;            /* upper-layer protocol: past telemetry and SRH */
    bit<20>     flow_label;
    bit<16>     l4_sport;
    bit<16>     l4_dport;
    bit<24>     bth_dest_qp;
    bit<8>      srh_segments_to_parse;
    bit<8>      ext_units_to_parse;  /* options header units still to extract */

    /* forwarding state */
    bit<(USID_BLOCK_BITS + USID_BITS)> dst_block_usid;  /* top of the IPv6 destination: block + uSID */
    bool        skip_forwarding;     /* decided already: dropped, punted or packet-out */
    bool        forwarded;           /* a next hop was chosen: decrement hop limit / TTL */
    bool        usid_local;          /* the carrier (or SRH) ends at this switch */
    bool        srh_error;           /* the parser stopped at a routing header (or an options header
                                        too long) it cannot process */
    bool        is_packet_out;
    bool        link_probe;          /* ETHERTYPE_LINK_PROBE frame: punted, or sent past port admin */
    bool        egress_dropped;      /* dropped in egress (port down) */
    bool        use_ecmp;            /* route chose an ECMP group */
    bool        use_ev_direct;       /* route chose an EV-direct group */
    group_id_t  group_id;
    bit<32>     ev;                  /* entropy value: udp sport << 16 | flow label[15:0] */
    drop_reason_t drop_reason;
    packet_in_reason_t packet_in_reason;

    /* congestion */
    qdepth_t    trim_threshold;
    qdepth_t    drop_threshold;
    qdepth_t    ecn_threshold;
    bool        trimmed;
    bit<16>     trim_len;            /* bytes kept by truncate(): Ethernet .. last transport header */

    /* telemetry */
    bool        postcard;            /* telemetry_watch asked for a postcard */
    bit<32>     switch_id;           /* from switch_info */
    @field_list(FL_POSTCARD) bit<32> pc_switch_id;
    @field_list(FL_POSTCARD) bit<16> pc_ingress_port;
    @field_list(FL_POSTCARD) bit<16> pc_egress_port;
    @field_list(FL_POSTCARD) bit<32> pc_ingress_ts_us;
    @field_list(FL_POSTCARD) bit<32> pc_hop_latency_us;
    @field_list(FL_POSTCARD) bit<24> pc_queue_depth;
    @field_list(FL_POSTCARD) bit<8>  pc_queue_id;
}

#endif  /* MRC_HEADERS_P4 */
