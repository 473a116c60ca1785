/* packetio.p4 -- controller packet I/O and the link-probe punt.
 *
 * PacketOut: a packet from the CPU port carries packet_out{egress_port}; it is sent to that port
 * as is, in the top queue, bypassing every forwarding feature (port admin state and port counters
 * still apply, except that a link probe also passes an administratively down port).
 * Link probes: a frame of ETHERTYPE_LINK_PROBE (0x88B5) arriving on a front-panel port goes to
 * the CPU port (PacketIn reason LINK_PROBE) before port admin, parser-error, SRv6 or routing
 * processing, so the controller's wiring check depends on the cable alone, not on tables.
 * Each one is counted in link_probe_counter[ingress_port] (and in port_rx_counter).
 * PacketIn: every packet leaving on CPU_PORT gets packet_in{ingress_port, reason} in egress;
 * the reason is the one ingress recorded (probe, link probe), POSTCARD for telemetry clones,
 * FORWARDED when a route simply pointed at the CPU port.
 */
#ifndef MRC_PACKETIO_P4
#define MRC_PACKETIO_P4

control packetio_ingress(inout headers_t hdr,
                         inout local_metadata_t lmd,
                         inout standard_metadata_t std_md) {
    counter(MAX_PORTS, CounterType.packets_and_bytes) link_probe_counter;

    apply {
        bool is_link_probe = hdr.ethernet.isValid() && hdr.ethernet.ether_type == ETHERTYPE_LINK_PROBE;
        if (hdr.cpu_out.isValid()) {
            std_md.egress_spec = hdr.cpu_out.egress_port;
            /* the controller's packets (wiring probes) take the top queue, as control packets do:
             * queued behind data, a congested port tail-dropped them and the wiring check saw a
             * lossy cable */
            std_md.priority = PRIORITY_TRIMMED;
            hdr.cpu_out.setInvalid();
            lmd.is_packet_out = true;
            lmd.link_probe = is_link_probe;
            lmd.skip_forwarding = true;
        } else if (is_link_probe && std_md.ingress_port != CPU_PORT) {
            /* A link probe is wired to whatever sent it: punt it whatever the port's admin
             * state, routes or uSIDs say. */
            std_md.egress_spec = CPU_PORT;
            lmd.packet_in_reason = PACKET_IN_REASON_LINK_PROBE;
            lmd.link_probe = true;
            lmd.skip_forwarding = true;
            link_probe_counter.count((bit<32>) std_md.ingress_port);
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
