/* telemetry.p4 -- per-packet telemetry: in-band hop records and postcards.
 *
 * In-band: a packet carrying the telemetry Hop-by-Hop option gets, in egress, the record
 *   telemetry_records[hop_count] = {switch_id, ingress_port, egress_port, ingress_ts_us,
 *                                   hop_latency_us, queue_depth (enq_qdepth), queue_id (priority)}
 * filled when hop_count < max_hops and hop_count < 4, and hop_count is incremented.
 * Postcards: a forwarded packet matching `telemetry_watch` is cloned egress-to-egress (clone
 *   session POSTCARD_SESSION_ID, which the controller points at the CPU port) with the same
 *   record preserved; the clone becomes a PacketIn (reason POSTCARD) whose payload is the
 *   20-byte record followed by the start of the frame (packetio.p4 builds it).
 * Timestamps are v1model's microseconds, truncated to 32 bits.
 */
#ifndef MRC_TELEMETRY_P4
#define MRC_TELEMETRY_P4

control telemetry_ingress(inout headers_t hdr,
                          inout local_metadata_t lmd,
                          inout standard_metadata_t std_md) {
    direct_counter(CounterType.packets_and_bytes) telemetry_watch_counter;

    action watch_postcard() {
        lmd.postcard = true;
    }

    table telemetry_watch {
        key = {
            lmd.flow_src: ternary @name("flow_src") @format(IPV6_ADDRESS);
            lmd.flow_dst: ternary @name("flow_dst") @format(IPV6_ADDRESS);
            lmd.ip_proto: ternary @name("ip_proto");
            lmd.l4_dport: ternary @name("l4_dport");
            lmd.bth_dest_qp: ternary @name("dest_qp");
        }
        actions = {
            watch_postcard;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        counters = telemetry_watch_counter;
        size = 256;
    }

    apply {
        if (lmd.forwarded && std_md.egress_spec != CPU_PORT) {
            telemetry_watch.apply();
        }
    }
}

control telemetry_egress(inout headers_t hdr,
                         inout local_metadata_t lmd,
                         inout standard_metadata_t std_md) {

    action set_switch_id(bit<32> switch_id) {
        lmd.switch_id = switch_id;
    }

    /* Keyless: the controller sets the switch id by modifying the default action. */
    table switch_info {
        actions = {
            set_switch_id;
        }
        default_action = set_switch_id(0);
        size = 1;
    }

    apply {
        if (hdr.telemetry.isValid() || lmd.postcard) {
            switch_info.apply();
            lmd.pc_switch_id = lmd.switch_id;
            lmd.pc_ingress_port = (bit<16>) std_md.ingress_port;
            lmd.pc_egress_port = (bit<16>) std_md.egress_port;
            lmd.pc_ingress_ts_us = (bit<32>) std_md.ingress_global_timestamp;
            lmd.pc_hop_latency_us = (bit<32>) (std_md.egress_global_timestamp -
                                               std_md.ingress_global_timestamp);
            lmd.pc_queue_depth = (bit<24>) std_md.enq_qdepth;
            lmd.pc_queue_id = (bit<8>) std_md.priority;

            if (hdr.telemetry.isValid() &&
                    hdr.telemetry.hop_count < hdr.telemetry.max_hops &&
                    hdr.telemetry.hop_count < TELEMETRY_RECORDS) {
                telemetry_record_t rec;
                rec.setValid();
                rec.switch_id = lmd.pc_switch_id;
                rec.ingress_port = lmd.pc_ingress_port;
                rec.egress_port = lmd.pc_egress_port;
                rec.ingress_ts_us = lmd.pc_ingress_ts_us;
                rec.hop_latency_us = lmd.pc_hop_latency_us;
                rec.queue_depth = lmd.pc_queue_depth;
                rec.queue_id = lmd.pc_queue_id;
                if (hdr.telemetry.hop_count == 0) {
                    hdr.telemetry_records[0] = rec;
                } else if (hdr.telemetry.hop_count == 1) {
                    hdr.telemetry_records[1] = rec;
                } else if (hdr.telemetry.hop_count == 2) {
                    hdr.telemetry_records[2] = rec;
                } else {
                    hdr.telemetry_records[3] = rec;
                }
                hdr.telemetry.hop_count = hdr.telemetry.hop_count + 1;
            }

            if (lmd.postcard) {
                clone_preserving_field_list(CloneType.E2E, POSTCARD_SESSION_ID, FL_POSTCARD);
            }
        }
    }
}

#endif  /* MRC_TELEMETRY_P4 */
