/* define.p4 -- constants, types and code points of the MRC fabric switch.
 *
 * Everything a controller, a test or a host must agree on with the data plane lives here:
 * protocol numbers, MRC opcodes, the telemetry option, the trimmed-packet mark, the drop
 * reasons (index of the `drop_reasons` counter) and the packet-in reasons.
 * docs/dataplane.md lists the same values; change both together.
 *
 * Constants are typed macros (`#define NAME 16w0x0800`), not `const` declarations: p4c 1.2.5.x
 * reports every top-level `const` as "[--Wwarn=unused]" (its unused-declaration check runs after
 * constant folding has replaced the uses; p4c PR 5342 moved it), which made 48 false warnings.
 * A macro declares nothing, so no p4c version warns, and the width prefix keeps the type.
 * `make contract` reads them into controller/p4contract.py.
 */
#ifndef MRC_DEFINE_P4
#define MRC_DEFINE_P4

/* ---- ports ------------------------------------------------------------------------------ */
#define CPU_PORT 255           /* simple_switch_grpc / softswitch --cpu-port 255 */
#define DROP_PORT 511          /* v1model: egress_spec 511 at the end of ingress = drop */
#define MAX_PORTS 512          /* size of per-port counters and registers (9-bit ports) */

/* ---- sizes -------------------------------------------------------------------------------- */
#define MAX_SRH_SEGMENTS 4     /* SRH segment-list header stack; more is a parser error */
#define MAX_EXT_UNITS 15       /* 8-byte units parsed after the first 8 bytes of a Hop-by-Hop or
                                  Destination Options header (128 bytes in all); more is a
                                  parser error, which drops only a packet ending here */
#define TELEMETRY_RECORDS 4    /* pre-allocated per-hop records in the telemetry option */
#define DROP_REASON_COUNT 16   /* size of the drop_reasons counter */

/* ---- clone sessions and preserved field lists --------------------------------------------- */
#define POSTCARD_SESSION_ID 100    /* clone session the controller points at CPU_PORT */
#define FL_POSTCARD 1              /* @field_list index preserved into postcard clones */
#define POSTCARD_TRUNC_BYTES 272   /* packet_in(3) + postcard(20) + the first 249 bytes of the frame */

/* ---- SRv6 uSID carrier (RFC 9800 NEXT-C-SID, the F3216 format) ---------------------------- */
#define USID_BLOCK_BITS 32     /* locator block: the top bits of the destination address */
#define USID_BITS 16           /* one uSID; a carrier holds (128 - 32) / 16 = 6 after the block */

typedef bit<9>   port_num_t;
typedef bit<48>  mac_addr_t;
typedef bit<32>  ipv4_addr_t;
typedef bit<128> ipv6_addr_t;
typedef bit<16>  group_id_t;
typedef bit<19>  qdepth_t;        /* v1model enq_qdepth / deq_qdepth width, in packets */
typedef bit<8>   drop_reason_t;
typedef bit<8>   packet_in_reason_t;

/* ---- Ethernet / IP ------------------------------------------------------------------------ */
#define ETHERTYPE_IPV4  16w0x0800
#define ETHERTYPE_IPV6  16w0x86dd
/* [ours] Link probes of the controller's wiring check: IEEE Std 802 Local Experimental Ethertype 1.
 * Arriving on a front-panel port such a frame goes to the CPU port before anything else. */
#define ETHERTYPE_LINK_PROBE  16w0x88b5

#define PROTO_HOPOPT   8w0    /* IPv6 Hop-by-Hop options */
#define PROTO_UDP      8w17
#define PROTO_IPV6     8w41   /* IPv6-in-IPv6: the inner RoCEv2 packet of SRv6 mode */
#define PROTO_ROUTING  8w43   /* IPv6 routing header (SRH when routing type is 4) */
#define PROTO_DSTOPTS  8w60   /* IPv6 Destination Options (parsed where it precedes the SRH) */

#define SRH_ROUTING_TYPE  8w4

/* ---- telemetry Hop-by-Hop option [ours] ---------------------------------------------------- */
#define TELEMETRY_OPT_TYPE     8w0x3e  /* RFC 4727 experimental: skip if unknown, may change */
#define TELEMETRY_OPT_LEN      8w84    /* 4 bytes of trace header + 4 x 20-byte records */
#define TELEMETRY_HBH_EXT_LEN  8w10    /* (10 + 1) * 8 = 88 bytes of Hop-by-Hop header */

/* ---- RoCEv2 ---------------------------------------------------------------------------------- */
#define UDP_PORT_ROCEV2  16w4791

#define BTH_OP_WRITE_FIRST          8w0x06
#define BTH_OP_WRITE_MIDDLE         8w0x07
#define BTH_OP_WRITE_LAST           8w0x08
#define BTH_OP_WRITE_LAST_WITH_IMM  8w0x09
#define BTH_OP_WRITE_ONLY           8w0x0a
#define BTH_OP_WRITE_ONLY_WITH_IMM  8w0x0b
#define BTH_OP_ACK                  8w0x11
#define BTH_OP_MRC_PROBE_REQ        8w0xc0  /* [ours] IBTA manufacturer-specific range */
#define BTH_OP_MRC_PROBE_RESP       8w0xc1
#define BTH_OP_MRC_PORT_STATUS      8w0xc2
#define BTH_OP_CNP                  8w0x81  /* RoCEv2 congestion notification packet (IBTA Annex A17) */

/* ---- ECN and trimming ------------------------------------------------------------------------ */
#define ECN_NOT_ECT  2w0
#define ECN_CE       2w3
#define DSCP_TRIMMED  6w11     /* [ours, cross-team] the trimmed-packet mark */
/* Strict-priority queues (standard_metadata.priority): bmv2 serves priority 0 first (since its PR
 * #1276, in the 1.15.5 this project is checked against; softswitch does the same).  Every packet
 * starts in the data queue; congestion.p4 lifts trimmed headers, control packets and resends. */
#define PRIORITY_TRIMMED  3w0  /* the top queue: trimmed headers and control packets */
#define DSCP_RESEND  6w34      /* [ours] MRC data resent after a loss verdict, or holding the ACK (AF41) */
#define PRIORITY_RESEND  3w1   /* the queue below the top one: resent data, ahead of the data queue */
#define PRIORITY_DATA  3w7     /* the data queue, served last */
/* Trimmed lengths: UDP(8) + BTH(12) + RETH(16) [+ ImmDt(4)]; no payload, no ICRC. */
#define TRIMMED_UDP_LEN  16w36
#define TRIMMED_UDP_LEN_IMM  16w40

/* ---- v1model instance types (bmv2 simple_switch values) -------------------------------------- */
#define PKT_INSTANCE_TYPE_NORMAL  32w0
#define PKT_INSTANCE_TYPE_EGRESS_CLONE  32w2

/* ---- drop reasons: index of the `drop_reasons` counter ---------------------------------------- */
#define DROP_REASON_UNSPECIFIED      8w0  /* dropped without a recorded reason */
#define DROP_REASON_PARSER_ERROR     8w1  /* malformed header, bad IPv4 checksum, ... */
#define DROP_REASON_PORT_ADMIN_DOWN  8w2  /* ingress or egress port disabled */
#define DROP_REASON_NO_ROUTE         8w3  /* route_v6/route_v4/ecmp/ev_direct miss */
#define DROP_REASON_HOP_LIMIT        8w4  /* IPv6 hop limit / IPv4 TTL <= 1 */
#define DROP_REASON_USID_UNKNOWN     8w5  /* our locator block, uSID not ours */
#define DROP_REASON_LOCAL_NOT_PROBE  8w6  /* carrier ends here and it is no probe */
#define DROP_REASON_QUEUE_FULL       8w7  /* egress queue estimate >= drop threshold */
#define DROP_REASON_NOT_IP           8w8  /* neither IPv4 nor IPv6 */

/* ---- packet-in reasons (packet_in.reason) ------------------------------------------------------ */
#define PACKET_IN_REASON_FORWARDED   8w0  /* a route pointed at the CPU port */
#define PACKET_IN_REASON_PROBE       8w1  /* MRC probe/port-status ending here */
#define PACKET_IN_REASON_POSTCARD    8w2  /* telemetry postcard (E2E clone) */
#define PACKET_IN_REASON_LINK_PROBE  8w3  /* link probe (ETHERTYPE_LINK_PROBE) received */

#endif  /* MRC_DEFINE_P4 */
