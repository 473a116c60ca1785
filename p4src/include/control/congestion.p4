/* congestion.p4 -- congestion signals for MRC: packet trimming (ingress) and ECN (egress).
 *
 * Queue estimate: v1model only reports queue depths in egress, so egress writes the depth it
 * observes at dequeue (deq_qdepth, packets) into `egress_qdepth[egress_port]` and ingress reads
 * it for the port a packet is routed to.  Between two dequeues ingress keeps it current itself:
 * every packet it admits to the data queues of a port with thresholds adds one (a burst that
 * arrives between two departures of a slow port is seen at once, not only after the next
 * dequeue, so trimming starts before the queue tail-drops).  Packets on the trimmed (highest)
 * priority queue neither add to it nor update it in egress, so the estimate tracks the data
 * queue.  Egress also stamps when it last refreshed the estimate (`egress_qdepth_us`).  A
 * packet that ingress trims or drops early on an estimate no dequeue has refreshed for
 * QDEPTH_STALE_US (or whose refresh time lies QDEPTH_FUTURE_US or more ahead) decrements it
 * by one (the data queue drains while nothing is added), so the estimate cannot stay above
 * the threshold for ever on a port that carries only data packets and tail-dropped one it had
 * counted.  A fresh estimate is not decremented: under sustained
 * overload several packets arrive per departure, and taking one away per trim admitted every
 * other arrival into a full queue, which the traffic manager then tail-dropped (a 10 Gb/s RC
 * sender into 20 Mb/s links: 33,000-37,000 tail drops a run of bench/mrc_perf_defaults.py once
 * trimmed headers shared the link; docs/demo.md).
 *
 * Trimming (ingress, table queue_thresholds keyed on the egress port, no entry = off):
 *   estimate >= trim_threshold and the packet is an MRC data packet (BTH WRITE opcodes
 *   0x06-0x0b with RETH) that is not already trimmed (DSCP != 11)
 *     -> cut after RETH [+ ImmDt] (truncate in egress), UDP length = 36 [40 with ImmDt],
 *        UDP checksum = 0, inner IPv6 payload length = UDP length, outer IPv6 payload length
 *        (or IPv4 total length) recomputed, DSCP = 11, priority PRIORITY_TRIMMED (0, the top queue).
 *   otherwise estimate >= drop_threshold and the packet is not a trimmed one
 *     -> dropped, DROP_REASON_QUEUE_FULL.
 *   ACKs (0x11), probes (0xc0-0xc2) and trimmed packets are never trimmed.  A packet trimmed
 *   upstream (DSCP 11) keeps the top queue at every later hop.
 * Control packets (BTH ACK/NAK 0x11, CNP 0x81, MRC probe request/response and port status
 *   0xc0-0xc2) go to the top queue as well, as NDP's priority queue carries headers, ACKs and NACKs:
 *   they are not counted in the data-queue estimate and never dropped early on it, so the feedback
 *   a sender acts on neither waits behind data nor is lost to a full data queue.
 * Resends: an MRC data packet with DSCP_RESEND (a sender's resend after a loss verdict, unless its
 *   packets are being trimmed; of a trim's resends only the packet holding the sender's cumulative
 *   ACK, from its second trim, while other packets of its QP are unacknowledged) goes to
 *   PRIORITY_RESEND (1), ahead of the data queue (PRIORITY_DATA, 7): not counted in the estimate, never trimmed or
 *   dropped early.  It is what a flow's cumulative ACK waits for.
 * ECN (egress, table ecn_threshold keyed on the egress port, no entry = off):
 *   ECN-capable (ECT(0)/ECT(1)) and enq_qdepth >= threshold -> CE, on the outer (or only) IP
 *   header.  Threshold 0 marks every ECN-capable packet.
 * Counter congestion_events[event] (packets): CONGESTION_EVENT_TRIMMED (0) packets trimmed here,
 *   CONGESTION_EVENT_ECN_CE (1) packets CE-marked here (not those that arrived CE),
 *   CONGESTION_EVENT_EARLY_DROP (2) packets dropped on the estimate (also in drop_reasons).
 */
#ifndef MRC_CONGESTION_P4
#define MRC_CONGESTION_P4

/* Shared by ingress (read, admit/decay) and egress (write): the data-queue estimate per port. */
register<qdepth_t>(MAX_PORTS) egress_qdepth;
/* When egress last wrote egress_qdepth for the port (its egress_global_timestamp, us). */
register<bit<48>>(MAX_PORTS) egress_qdepth_us;
/* Older than this: decay on trims.  1 s, not the 20 ms first chosen: a softswitch process that the
 * busy 2-core machine descheduled for tens of ms came back to a backlog whose trims all found the
 * estimate "stale" and decayed it below the threshold before the traffic manager had dequeued
 * anything, and the data queue tail-dropped (every default demo run, with the live view and metrics
 * exporter on: 11-18 tail drops, 6-10 healthy EVs retired; 0 with 1 s in the runs measured). */
#define QDEPTH_STALE_US 48w1000000
/* The refresh time's age is now - refreshed in 48-bit arithmetic (wrap-safe).  A refresh a little
 * ahead of this packet's ingress stamp is fresh: egress runs concurrently and stamps later than a
 * packet that ingress stamped before the register read.  One further ahead than this cannot come
 * from this switch's egress (a P4Runtime client wrote it): the estimate is stale, as if never
 * refreshed, so such a write cannot hold a port trimming for ever.  60 s: beyond any
 * descheduling of a software switch, and a written value stays "fresh" at most this long. */
#define QDEPTH_FUTURE_US 48w60000000
/* An age above this is a refresh less than QDEPTH_FUTURE_US ahead (fresh); this age or below, and at
 * least QDEPTH_STALE_US, is stale. */
#define QDEPTH_AGE_FUTURE (48w0 - QDEPTH_FUTURE_US)

/* congestion_events indices: what this switch did to packets because of congestion. */
#define CONGESTION_EVENT_TRIMMED  32w0
#define CONGESTION_EVENT_ECN_CE  32w1
#define CONGESTION_EVENT_EARLY_DROP  32w2
#define CONGESTION_EVENT_COUNT  32w3
#define QDEPTH_ESTIMATE_MAX  19w0x7FFFF  /* the estimate saturates instead of wrapping */
/* Shared by ingress (trims, early drops) and egress (CE marks). */
counter(CONGESTION_EVENT_COUNT, CounterType.packets) congestion_events;

control congestion_ingress(inout headers_t hdr,
                           inout local_metadata_t lmd,
                           inout standard_metadata_t std_md) {
    direct_counter(CounterType.packets_and_bytes) queue_thresholds_counter;

    action set_queue_thresholds(qdepth_t trim_threshold, qdepth_t drop_threshold) {
        lmd.trim_threshold = trim_threshold;
        lmd.drop_threshold = drop_threshold;
    }

    table queue_thresholds {
        key = {
            std_md.egress_spec: exact @name("port");
        }
        actions = {
            set_queue_thresholds;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        counters = queue_thresholds_counter;
        size = MAX_PORTS;
    }

    apply {
        if (lmd.forwarded && std_md.egress_spec != CPU_PORT) {
            /* the outer (or only) IP header's DSCP; 0 without one */
            bit<6> dscp = 0;
            if (hdr.ipv6.isValid()) {
                dscp = hdr.ipv6.dscp;
            } else if (hdr.ipv4.isValid()) {
                dscp = hdr.ipv4.dscp;
            }
            bool already_trimmed = dscp == DSCP_TRIMMED;
            bool data = hdr.bth.isValid() && hdr.reth.isValid() &&
                        hdr.bth.opcode >= BTH_OP_WRITE_FIRST &&
                        hdr.bth.opcode <= BTH_OP_WRITE_ONLY_WITH_IMM;
            /* control packets take the top queue too (see the head of this file) */
            bool ctrl_pkt = hdr.bth.isValid() &&
                           (hdr.bth.opcode == BTH_OP_ACK || hdr.bth.opcode == BTH_OP_CNP ||
                            (hdr.bth.opcode >= BTH_OP_MRC_PROBE_REQ && hdr.bth.opcode <= BTH_OP_MRC_PORT_STATUS));
            /* data resent after a loss verdict: the queue below the top one (see the head of this file) */
            bool resend = data && dscp == DSCP_RESEND;
            if (already_trimmed || ctrl_pkt) {
                std_md.priority = PRIORITY_TRIMMED;  /* trimmed upstream: still the highest queue */
            } else if (resend) {
                std_md.priority = PRIORITY_RESEND;
            }
            if (queue_thresholds.apply().hit) {
                qdepth_t estimate;
                egress_qdepth.read(estimate, (bit<32>) std_md.egress_spec);

                bool decay = false;

                if (data && !already_trimmed && !resend && estimate >= lmd.trim_threshold) {
                    bit<16> udp_len = TRIMMED_UDP_LEN;
                    if (hdr.immdt.isValid()) {
                        udp_len = TRIMMED_UDP_LEN_IMM;
                    }
                    hdr.udp.len = udp_len;
                    hdr.udp.checksum = 0;
                    bit<16> l3_payload = udp_len;
                    if (hdr.inner_ipv6.isValid()) {
                        hdr.inner_ipv6.payload_len = udp_len;
                        l3_payload = l3_payload + 40;
                    }
                    if (hdr.srh.isValid()) {
                        l3_payload = l3_payload + 8 + (((bit<16>) hdr.srh.hdr_ext_len) << 3);
                    }
                    if (hdr.hbh.isValid()) {
                        l3_payload = l3_payload + (((bit<16>) hdr.hbh.hdr_ext_len + 1) << 3);
                    }
                    if (hdr.hbh_opts.isValid()) {
                        l3_payload = l3_payload + (((bit<16>) hdr.hbh_opts.hdr_ext_len + 1) << 3);
                    }
                    if (hdr.dest_opts.isValid()) {
                        l3_payload = l3_payload + (((bit<16>) hdr.dest_opts.hdr_ext_len + 1) << 3);
                    }
                    if (hdr.ipv6.isValid()) {
                        hdr.ipv6.payload_len = l3_payload;
                        hdr.ipv6.dscp = DSCP_TRIMMED;
                        lmd.trim_len = 14 + 40 + l3_payload;
                    } else {
                        hdr.ipv4.total_len = 20 + l3_payload;
                        hdr.ipv4.dscp = DSCP_TRIMMED;
                        lmd.trim_len = 14 + 20 + l3_payload;
                    }
                    std_md.priority = PRIORITY_TRIMMED;
                    lmd.trimmed = true;
                    decay = true;
                    congestion_events.count(CONGESTION_EVENT_TRIMMED);
                } else if (!already_trimmed && !ctrl_pkt && !resend && estimate >= lmd.drop_threshold) {
                    mark_to_drop(std_md);
                    lmd.drop_reason = DROP_REASON_QUEUE_FULL;
                    lmd.forwarded = false;
                    lmd.skip_forwarding = true;
                    decay = true;
                    congestion_events.count(CONGESTION_EVENT_EARLY_DROP);
                }
                /* A packet kept out of the data queue lets a stale estimate drain by one; without
                 * this a port that carries only data would keep trimming (or dropping) for ever
                 * once nothing reached egress on the data queue to refresh the estimate. */
                if (decay) {
                    bit<48> refreshed;
                    egress_qdepth_us.read(refreshed, (bit<32>) std_md.egress_spec);
                    bit<48> age = std_md.ingress_global_timestamp - refreshed;
                    if (estimate > 0 && (age >= QDEPTH_STALE_US && age <= QDEPTH_AGE_FUTURE)) {
                        egress_qdepth.write((bit<32>) std_md.egress_spec, estimate - 1);
                    }
                } else if (!already_trimmed && !ctrl_pkt && !resend && estimate != QDEPTH_ESTIMATE_MAX) {
                    /* admitted to the data queue: one more packet until egress reports the truth */
                    egress_qdepth.write((bit<32>) std_md.egress_spec, estimate + 1);
                }
            }
        }
    }
}

control congestion_egress(inout headers_t hdr,
                          inout local_metadata_t lmd,
                          inout standard_metadata_t std_md) {
    direct_counter(CounterType.packets_and_bytes) ecn_threshold_counter;

    action set_ecn_threshold(qdepth_t threshold) {
        lmd.ecn_threshold = threshold;
    }

    table ecn_threshold {
        key = {
            std_md.egress_port: exact @name("port");
        }
        actions = {
            set_ecn_threshold;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        counters = ecn_threshold_counter;
        size = MAX_PORTS;
    }

    apply {
        if (std_md.priority != PRIORITY_TRIMMED && std_md.priority != PRIORITY_RESEND) {
            egress_qdepth.write((bit<32>) std_md.egress_port, std_md.deq_qdepth);
            egress_qdepth_us.write((bit<32>) std_md.egress_port, std_md.egress_global_timestamp);
        }
        if (lmd.trimmed) {
            truncate((bit<32>) lmd.trim_len);
        }
        if (ecn_threshold.apply().hit) {
            if (std_md.enq_qdepth >= lmd.ecn_threshold) {
                if (hdr.ipv6.isValid() && hdr.ipv6.ecn != ECN_NOT_ECT) {
                    if (hdr.ipv6.ecn != ECN_CE) {
                        congestion_events.count(CONGESTION_EVENT_ECN_CE);
                    }
                    hdr.ipv6.ecn = ECN_CE;
                } else if (hdr.ipv4.isValid() && hdr.ipv4.ecn != ECN_NOT_ECT) {
                    if (hdr.ipv4.ecn != ECN_CE) {
                        congestion_events.count(CONGESTION_EVENT_ECN_CE);
                    }
                    hdr.ipv4.ecn = ECN_CE;
                }
            }
        }
    }
}

#endif  /* MRC_CONGESTION_P4 */
