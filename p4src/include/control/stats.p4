/* stats.p4 -- per-port packet/byte counters and drop counters by reason.
 *
 * port_rx_counter[ingress_port]: every packet received (PacketOut counts on CPU_PORT).
 * port_tx_counter[egress_port]:  every packet that leaves egress (PacketIn counts on CPU_PORT).
 * drop_reasons[reason]: packets dropped by ingress or egress, indexed by DROP_REASON_* of
 *   define.p4.  Parser errors are dropped here, but for the SRH errors and ExtHeaderTooLong (an
 *   options header or SRH TLVs too long to parse), which srv6.p4 drops only where the packet ends
 *   at our SID.  Queue tail drops of the traffic manager happen outside the program and are
 *   counted by the target.
 */
#ifndef MRC_STATS_P4
#define MRC_STATS_P4

/* Shared by ingress and egress. */
counter(DROP_REASON_COUNT, CounterType.packets_and_bytes) drop_reasons;

control stats_ingress_rx(inout headers_t hdr,
                         inout local_metadata_t lmd,
                         inout standard_metadata_t std_md) {
    counter(MAX_PORTS, CounterType.packets_and_bytes) port_rx_counter;

    apply {
        port_rx_counter.count((bit<32>) std_md.ingress_port);
        if (std_md.parser_error == error.SrhUnsupportedType ||
                std_md.parser_error == error.SrhTooManySegments ||
                std_md.parser_error == error.SrhMalformed ||
                std_md.parser_error == error.ExtHeaderTooLong) {
            /* A routing header (or an options header too long to parse) this program cannot
             * process is only an error where the packet ends at one of our SIDs (srv6.p4 drops it
             * there): a transit node forwards on the DA without inspecting the routing header
             * (RFC 8754 4.2, RFC 8200 4.4), and a uN shift needs none of it (RFC 9800 4.1.1). */
            lmd.srh_error = true;
        } else if ((std_md.parser_error != error.NoError || std_md.checksum_error == 1) &&
                   !lmd.skip_forwarding) {
            mark_to_drop(std_md);
            lmd.drop_reason = DROP_REASON_PARSER_ERROR;
            lmd.skip_forwarding = true;
        }
    }
}

control stats_ingress_drops(inout headers_t hdr,
                            inout local_metadata_t lmd,
                            inout standard_metadata_t std_md) {
    apply {
        if (std_md.egress_spec == DROP_PORT) {
            drop_reasons.count((bit<32>) lmd.drop_reason);
        }
    }
}

control stats_egress(inout headers_t hdr,
                     inout local_metadata_t lmd,
                     inout standard_metadata_t std_md) {
    counter(MAX_PORTS, CounterType.packets_and_bytes) port_tx_counter;

    apply {
        if (lmd.egress_dropped) {
            drop_reasons.count((bit<32>) lmd.drop_reason);
        } else {
            port_tx_counter.count((bit<32>) std_md.egress_port);
        }
    }
}

#endif  /* MRC_STATS_P4 */
