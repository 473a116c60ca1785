/* packetio.p4 -- controller packet I/O.
 *
 * PacketOut: a packet from the CPU port carries packet_out{egress_port}; it is sent to that port
 * as is, bypassing every forwarding feature (port admin state and port counters still apply).
 * PacketIn: every packet leaving on CPU_PORT gets packet_in{ingress_port, reason} in egress;
 * the reason is the one ingress recorded (probe), POSTCARD for telemetry clones, FORWARDED when
 * a route simply pointed at the CPU port.
 */
#ifndef MRC_PACKETIO_P4
#define MRC_PACKETIO_P4

control packetio_ingress(inout headers_t hdr,
                         inout local_metadata_t lmd,
                         inout standard_metadata_t std_md) {
    apply {
        if (hdr.cpu_out.isValid()) {
            std_md.egress_spec = hdr.cpu_out.egress_port;
            hdr.cpu_out.setInvalid();
            lmd.is_packet_out = true;
            lmd.skip_forwarding = true;
        }
    }
}

control packetio_egress(inout headers_t hdr,
                        inout local_metadata_t lmd,
                        inout standard_metadata_t std_md) {
    apply {
        if (std_md.instance_type == PKT_INSTANCE_TYPE_EGRESS_CLONE) {
            /* A postcard: the clone carries the original frame as payload; put the hop record
             * preserved from the original's egress in front of it and cut it short. */
            hdr.cpu_in.setValid();
            hdr.cpu_in.ingress_port = (port_num_t) lmd.pc_ingress_port;
            hdr.cpu_in._pad = 0;
            hdr.cpu_in.reason = PACKET_IN_REASON_POSTCARD;
            hdr.postcard.setValid();
            hdr.postcard.switch_id = lmd.pc_switch_id;
            hdr.postcard.ingress_port = lmd.pc_ingress_port;
            hdr.postcard.egress_port = lmd.pc_egress_port;
            hdr.postcard.ingress_ts_us = lmd.pc_ingress_ts_us;
            hdr.postcard.hop_latency_us = lmd.pc_hop_latency_us;
            hdr.postcard.queue_depth = lmd.pc_queue_depth;
            hdr.postcard.queue_id = lmd.pc_queue_id;
            truncate(POSTCARD_TRUNC_BYTES);
        } else if (std_md.egress_port == CPU_PORT) {
            hdr.cpu_in.setValid();
            hdr.cpu_in.ingress_port = std_md.ingress_port;
            hdr.cpu_in._pad = 0;
            hdr.cpu_in.reason = lmd.packet_in_reason;
        }
    }
}

#endif  /* MRC_PACKETIO_P4 */
