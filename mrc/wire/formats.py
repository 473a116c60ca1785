"""Byte layouts and constants of every header the MRC endpoint sends (the single source of truth).

Everything is network byte order (big-endian) except the ICRC, which RoCEv2 appends little-endian.
Sizes are in bytes.  ``[ours]`` marks a choice this project makes where public material is silent.

Packet stacks
-------------
SRv6 mode (endpoint -> fabric)::

    Ethernet(14) / outer IPv6(40, dst = uSID carrier, next header 0|43|41)
      / [Hop-by-Hop telemetry(88), next header 43|41]  (optional)
      / [SRH type 4, one segment(24), next header 41]  (optional)
      / inner IPv6(40, next header 17) / UDP(8, dport 4791)
      / BTH(12) / transport headers / payload / ICRC(4, covers the inner packet only)

(each "next header" is the value the header itself carries, naming what follows it)

STEV and UDP mode: Ethernet / IPv6 [/ Hop-by-Hop telemetry] / UDP / BTH / ... / ICRC (covers the IPv6
packet).  STEV: EV high 16 bits = UDP source port, low 16 bits = flow label low 16 bits.  UDP: 16-bit
EV in the UDP source port.

Header table
------------
=================  ====  ===================================================================
header             size  fields (bits)
=================  ====  ===================================================================
Ethernet             14  dst(48) src(48) ethertype(16)=0x86DD
IPv6                 40  version(4)=6 traffic_class(8)=DSCP(6)|ECN(2) flow_label(20)
                         payload_len(16) next_header(8) hop_limit(8) src(128) dst(128)
HBH telemetry        88  next_header(8) hdr_ext_len(8)=10 | opt_type(8)=0x3E opt_len(8)=84 |
  [ours]                 max_hops(8)=4 hop_count(8) flags(8) reserved(8) | 4 x record(160)
telemetry record     20  switch_id(32) ingress_port(16) egress_port(16) ingress_ts_us(32)
  [ours]                 hop_latency_us(32) queue_depth(24) queue_id(8)
SRH (1 segment)      24  next_header(8)=41 hdr_ext_len(8)=2 routing_type(8)=4 segments_left(8)=1
                         last_entry(8)=0 flags(8)=0 tag(16)=0 segment[0](128)
UDP                   8  sport(16) dport(16)=4791 length(16) checksum(16)=0
BTH                  12  opcode(8) se(1) m(1) pad(2) tver(4) pkey(16) | fecn(1) becn(1) resv6(6)
                         dest_qp(24) | ack_req(1) resv7(7) psn(24)
RETH                 16  va(64) rkey(32) dma_len(32)   (on EVERY MRC data packet [ours in RC
                         terms; MRC places every packet by its own address])
ImmDt                 4  imm(32)   (LAST_WITH_IMM / ONLY_WITH_IMM only)
AETH                  4  syndrome(8) msn(24)
MRC SACK [ours]   60+4n  flags(8) cum_psn(24) | n_ecn(8) sack_base(24) | n_trim(8) trigger_psn(24)
                         | service_time_ns(32) | received_bytes(64) | ev_echo(32)
                         | bitmap(256) | n_ecn x (rsv(8) psn(24))
                         | n_trim x (rsv(8) psn(24))
PROBE_REQ/RESP       24  req_id(32) flags(8) port(8) reserved(16) sender_ts_ns(64)
  [ours]                 service_time_ns(32) ev_echo(32)
PORT_STATUS [ours]   16  req_id(32) n_ports(8) flags(8) reserved(16) up_mask(64) (bit p-1 = port p up)
ICRC                  4  CRC-32, little-endian
=================  ====  ===================================================================

SACK semantics [ours]: ``cum_psn`` is the next PSN the responder expects (every PSN before it has
arrived); the bitmap is one 256-bit big-endian integer whose bit ``i`` (value ``2**i``, so the
last byte's least significant bit is ``i = 0``) says PSN ``sack_base + i`` has arrived; the responder chooses
``sack_base`` so the packet that triggered the ACK is inside the 256-PSN window.  ``trigger_psn`` is
the PSN of the packet that triggered this ACK, ``flags`` say whether it was a retransmission
(RETX_ECHO), CE-marked (ECN_ECHO) or trimmed (TRIM); ``ev_echo`` is the entropy it arrived with
(``udp_sport << 16 | flow_label & 0xFFFF`` of the RoCE UDP/IPv6 headers).  ``service_time_ns`` is the
time the responder held the trigger packet before this ACK left.
"""

from __future__ import annotations

# --- Ethernet / IPv6 -------------------------------------------------------------------------
ETH_LEN = 14
ETH_WIRE_OVERHEAD = 24  # bytes a frame costs a link beyond its own: preamble + SFD (8), FCS (4), gap (12)
ETHERTYPE_IPV6 = 0x86DD
IPV6_LEN = 40
NH_HOP_BY_HOP = 0
NH_UDP = 17
NH_IPV6 = 41  # IPv6-in-IPv6 (the inner RoCEv2 packet)
NH_ROUTING = 43
NH_NONE = 59
DEFAULT_HOP_LIMIT = 64

# Traffic class = DSCP(6) | ECN(2)
ECN_NOT_ECT = 0b00
ECN_ECT1 = 0b01
ECN_ECT0 = 0b10
ECN_CE = 0b11
DSCP_DATA = 26  # [ours] default DSCP of MRC data (AF31)
DSCP_TRIMMED = 11  # [ours, fixed cross-team] DSCP of a trimmed packet
# v1model priorities (queues) the switches give packets (define.p4): 0 is served first, as on bmv2 since
# its PR #1276 and on softswitch
TRIM_PRIORITY = 0  # [ours] the top queue: trimmed packets and control packets
DSCP_RESEND = 34  # [ours] DSCP of MRC data resent after a loss verdict (AF41): the switches queue it ...
RESEND_PRIORITY = 1  # [ours] ... at this priority, ahead of the data queue (congestion.p4)
DATA_PRIORITY = 7  # [ours] every other packet: the data queue, served last

# --- Hop-by-Hop telemetry option [ours, fixed cross-team] ------------------------------------
HBH_OPT_TELEMETRY = 0x3E  # RFC 4727 experimental; 00 = skip if unknown, 1 = may change en route
TELEMETRY_MAX_HOPS = 4
TELEMETRY_RECORD_LEN = 20
TELEMETRY_OPT_DATA_LEN = 4 + TELEMETRY_MAX_HOPS * TELEMETRY_RECORD_LEN  # 84
HBH_TELEMETRY_LEN = 2 + 2 + TELEMETRY_OPT_DATA_LEN  # 88
HBH_TELEMETRY_EXT_LEN = HBH_TELEMETRY_LEN // 8 - 1  # 10

# --- SRH (RFC 8754), one segment ---------------------------------------------------------------
SRH_TYPE = 4
SRH_ONE_SEG_LEN = 8 + 16  # 24
SRH_ONE_SEG_EXT_LEN = SRH_ONE_SEG_LEN // 8 - 1  # 2

# --- UDP / RoCEv2 ------------------------------------------------------------------------------
UDP_LEN = 8
ROCE_UDP_PORT = 4791
SRV6_INNER_SPORT_BASE = 0xC000  # [ours] SRv6 mode: inner UDP sport = 0xC000 | (ev_index & 0x3FFF)

BTH_LEN = 12
RETH_LEN = 16
IMMDT_LEN = 4
AETH_LEN = 4
ICRC_LEN = 4
DEFAULT_PKEY = 0xFFFF  # full member (bit 15) of the default partition 0x7FFF
PKEY_FULL_MEMBER = 0x8000
PKEY_PARTITION_MASK = 0x7FFF
PSN_MASK = 0xFFFFFF
PSN_MOD = 1 << 24
QPN_MASK = 0xFFFFFF

# BTH opcodes (RC)
OP_WRITE_FIRST = 0x06
OP_WRITE_MIDDLE = 0x07
OP_WRITE_LAST = 0x08
OP_WRITE_LAST_IMM = 0x09
OP_WRITE_ONLY = 0x0A
OP_WRITE_ONLY_IMM = 0x0B
OP_ACK = 0x11
OP_CNP = 0x81  # RoCEv2 congestion notification packet (Annex A17): BTH + 16 reserved bytes + ICRC
CNP_LEN = 16
BTH_BECN = 0x40000000  # in the resv8a|dest_qp word
# [ours] MRC opcodes in the manufacturer-specific range
OP_PROBE_REQ = 0xC0
OP_PROBE_RESP = 0xC1
OP_PORT_STATUS = 0xC2

DATA_OPCODES = frozenset(
    (OP_WRITE_FIRST, OP_WRITE_MIDDLE, OP_WRITE_LAST, OP_WRITE_LAST_IMM, OP_WRITE_ONLY, OP_WRITE_ONLY_IMM)
)
IMM_OPCODES = frozenset((OP_WRITE_LAST_IMM, OP_WRITE_ONLY_IMM))
LAST_OPCODES = frozenset((OP_WRITE_LAST, OP_WRITE_LAST_IMM, OP_WRITE_ONLY, OP_WRITE_ONLY_IMM))
FIRST_OPCODES = frozenset((OP_WRITE_FIRST, OP_WRITE_ONLY, OP_WRITE_ONLY_IMM))
KNOWN_OPCODES = DATA_OPCODES | {OP_ACK, OP_CNP, OP_PROBE_REQ, OP_PROBE_RESP, OP_PORT_STATUS}

PROBE_QPN = 1  # [ours] probes and PORT_STATUS are connectionless: BTH dest QP = 1

# AETH syndromes
AETH_ACK = 0x00
AETH_NAK_PSN_SEQ_ERR = 0x60
AETH_NAK_INVALID_REQ = 0x61
AETH_NAK_REMOTE_ACCESS = 0x62
AETH_NAK_REMOTE_OP = 0x63
AETH_RNR_NAK = 0x20  # bits 7:5 = 001; bits 4:0 = the RNR timer code (how long the requester waits)
AETH_RNR_TIMER_MASK = 0x1F
# IB's RNR NAK timer codes (the verbs' min_rnr_timer), in microseconds: code 0 is the longest, 655.36 ms
RNR_TIMER_US = (655_360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1_280, 1_920, 2_560,
                3_840, 5_120, 7_680, 10_240, 15_360, 20_480, 30_720, 40_960, 61_440, 81_920, 122_880,
                163_840, 245_760, 327_680, 491_520)
AETH_MSN_MASK = 0xFFFFFF

# --- MRC SACK header [ours] -------------------------------------------------------------------
SACK_FIXED_LEN = 60
SACK_BITMAP_BITS = 256
SACK_BITMAP_LEN = SACK_BITMAP_BITS // 8  # 32
SACK_MAX_LIST = 16  # at most this many ECN PSNs and this many trim PSNs per SACK
SACK_FLAG_RETX_ECHO = 0x01  # trigger packet was a retransmission (no RTT sample)
SACK_FLAG_ECN_ECHO = 0x02  # trigger packet arrived CE-marked
SACK_FLAG_TRIM = 0x04  # trigger packet arrived trimmed
SACK_FLAG_MRC = 0x80  # always set: distinguishes an MRC SACK from a bare RC ACK with padding

# --- Probes and PORT_STATUS [ours] -------------------------------------------------------------
PROBE_LEN = 24
PROBE_FLAG_SERVICE_TIME = 0x01  # response: service_time_ns is valid and was measured
PROBE_FLAG_CTL = 0x02  # a controller request (mrc_ctl_ep_batch_send_wait); the response echoes it
PROBE_FLAG_PORT_STATUS_ACK = 0x04  # response: the answer to a controller PORT_STATUS (same req_id)
PORT_STATUS_FLAG_CTL = 0x01  # PORT_STATUS from mrc_ctl_ep_batch_send_wait: answer with a PROBE_RESP
PORT_STATUS_LEN = 16

# --- Offsets inside fixed headers (used by codec fast paths) ------------------------------------
IPV6_OFF_PLEN = 4
IPV6_OFF_NH = 6
IPV6_OFF_HLIM = 7
IPV6_OFF_SRC = 8
IPV6_OFF_DST = 24
UDP_OFF_LEN = 4
UDP_OFF_CSUM = 6
BTH_OFF_RESV8A = 4  # fecn/becn/resv6 byte, masked in the ICRC


def pkey_match(a: int, b: int) -> bool:
    """Whether two P_Keys let their ends talk (InfiniBand partition key matching, as Linux rxe's
    ``pkey_match``): the same partition (low 15 bits, never 0, the invalid key), and at least one of
    the two a full member (bit 15); two limited members of one partition do not match."""
    p = a & PKEY_PARTITION_MASK
    return p != 0 and p == b & PKEY_PARTITION_MASK and bool((a | b) & PKEY_FULL_MEMBER)
