/* define.p4 -- constants, types and code points of the MRC fabric switch.
 *
 * Everything a controller, a test or a host must agree on with the data plane lives here:
 * protocol numbers, MRC opcodes, the telemetry option, the trimmed-packet mark, the drop
 * reasons (index of the `drop_reasons` counter) and the packet-in reasons.
 * docs/dataplane.md lists the same values; change both together.
 */
#ifndef MRC_DEFINE_P4
#define MRC_DEFINE_P4

/* ---- ports ------------------------------------------------------------------------------ */
#define CPU_PORT 255           /* simple_switch_grpc / softswitch --cpu-port 255 */
#define DROP_PORT 511          /* v1model: egress_spec 511 at the end of ingress = drop */
#define MAX_PORTS 512          /* size of per-port counters and registers (9-bit ports) */

/* ---- sizes -------------------------------------------------------------------------------- */
#define MAX_SRH_SEGMENTS 4     /* SRH segment-list header stack; more is a parser error */
#define TELEMETRY_RECORDS 4    /* pre-allocated per-hop records in the telemetry option */
#define DROP_REASON_COUNT 16   /* size of the drop_reasons counter */

/* ---- clone sessions and preserved field lists --------------------------------------------- */
#define POSTCARD_SESSION_ID 100    /* clone session the controller points at CPU_PORT */
#define FL_POSTCARD 1              /* @field_list index preserved into postcard clones */
#define POSTCARD_TRUNC_BYTES 272   /* packet_in(3) + postcard(20) + the first 249 bytes of the frame */

typedef bit<9>   port_num_t;
typedef bit<48>  mac_addr_t;
typedef bit<32>  ipv4_addr_t;
typedef bit<128> ipv6_addr_t;
typedef bit<16>  group_id_t;
typedef bit<19>  qdepth_t;        /* v1model enq_qdepth / deq_qdepth width, in packets */
typedef bit<8>   drop_reason_t;
typedef bit<8>   packet_in_reason_t;

/* ---- Ethernet / IP ------------------------------------------------------------------------ */
const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<16> ETHERTYPE_IPV6 = 0x86dd;
/* [ours] Link probes of the controller's wiring check: IEEE Std 802 Local Experimental Ethertype 1.
 * Arriving on a front-panel port such a frame goes to the CPU port before anything else. */
const bit<16> ETHERTYPE_LINK_PROBE = 0x88b5;

const bit<8> PROTO_HOPOPT  = 0;    /* IPv6 Hop-by-Hop options */
const bit<8> PROTO_UDP     = 17;
const bit<8> PROTO_IPV6    = 41;   /* IPv6-in-IPv6: the inner RoCEv2 packet of SRv6 mode */
const bit<8> PROTO_ROUTING = 43;   /* IPv6 routing header (SRH when routing type is 4) */

const bit<8> SRH_ROUTING_TYPE = 4;

/* ---- telemetry Hop-by-Hop option [ours] ---------------------------------------------------- */
const bit<8> TELEMETRY_OPT_TYPE    = 0x3e;  /* RFC 4727 experimental: skip if unknown, may change */
const bit<8> TELEMETRY_OPT_LEN     = 84;    /* 4 bytes of trace header + 4 x 20-byte records */
const bit<8> TELEMETRY_HBH_EXT_LEN = 10;    /* (10 + 1) * 8 = 88 bytes of Hop-by-Hop header */

/* ---- RoCEv2 ---------------------------------------------------------------------------------- */
const bit<16> UDP_PORT_ROCEV2 = 4791;

const bit<8> BTH_OP_WRITE_FIRST         = 0x06;
const bit<8> BTH_OP_WRITE_MIDDLE        = 0x07;
const bit<8> BTH_OP_WRITE_LAST          = 0x08;
const bit<8> BTH_OP_WRITE_LAST_WITH_IMM = 0x09;
const bit<8> BTH_OP_WRITE_ONLY          = 0x0a;
const bit<8> BTH_OP_WRITE_ONLY_WITH_IMM = 0x0b;
const bit<8> BTH_OP_ACK                 = 0x11;
const bit<8> BTH_OP_MRC_PROBE_REQ       = 0xc0;  /* [ours] IBTA manufacturer-specific range */
const bit<8> BTH_OP_MRC_PROBE_RESP      = 0xc1;
const bit<8> BTH_OP_MRC_PORT_STATUS     = 0xc2;

/* ---- ECN and trimming ------------------------------------------------------------------------ */
const bit<2> ECN_NOT_ECT = 0;
const bit<2> ECN_CE      = 3;
const bit<6> DSCP_TRIMMED = 11;     /* [ours, cross-team] the trimmed-packet mark */
const bit<3> PRIORITY_TRIMMED = 7;  /* highest strict-priority queue */
/* Trimmed lengths: UDP(8) + BTH(12) + RETH(16) [+ ImmDt(4)]; no payload, no ICRC. */
const bit<16> TRIMMED_UDP_LEN = 36;
const bit<16> TRIMMED_UDP_LEN_IMM = 40;

/* ---- v1model instance types (bmv2 simple_switch values) -------------------------------------- */
const bit<32> PKT_INSTANCE_TYPE_NORMAL = 0;
const bit<32> PKT_INSTANCE_TYPE_EGRESS_CLONE = 2;

/* ---- drop reasons: index of the `drop_reasons` counter ---------------------------------------- */
const drop_reason_t DROP_REASON_UNSPECIFIED     = 0;  /* dropped without a recorded reason */
const drop_reason_t DROP_REASON_PARSER_ERROR    = 1;  /* malformed header, >4 SRH segments, ... */
const drop_reason_t DROP_REASON_PORT_ADMIN_DOWN = 2;  /* ingress or egress port disabled */
const drop_reason_t DROP_REASON_NO_ROUTE        = 3;  /* route_v6/route_v4/ecmp/ev_direct miss */
const drop_reason_t DROP_REASON_HOP_LIMIT       = 4;  /* IPv6 hop limit / IPv4 TTL <= 1 */
const drop_reason_t DROP_REASON_USID_UNKNOWN    = 5;  /* our locator block, uSID not ours */
const drop_reason_t DROP_REASON_LOCAL_NOT_PROBE = 6;  /* carrier ends here and it is no probe */
const drop_reason_t DROP_REASON_QUEUE_FULL      = 7;  /* egress queue estimate >= drop threshold */
const drop_reason_t DROP_REASON_NOT_IP          = 8;  /* neither IPv4 nor IPv6 */

/* ---- packet-in reasons (packet_in.reason) ------------------------------------------------------ */
const packet_in_reason_t PACKET_IN_REASON_FORWARDED  = 0;  /* a route pointed at the CPU port */
const packet_in_reason_t PACKET_IN_REASON_PROBE      = 1;  /* MRC probe/port-status ending here */
const packet_in_reason_t PACKET_IN_REASON_POSTCARD   = 2;  /* telemetry postcard (E2E clone) */
const packet_in_reason_t PACKET_IN_REASON_LINK_PROBE = 3;  /* link probe (ETHERTYPE_LINK_PROBE) received */

#endif  /* MRC_DEFINE_P4 */
