/* mrc_switch.p4 -- the MRC fabric switch (P4_16, v1model).
 *
 * A static SRv6 uSID switch for MRC (Multipath Reliable Connection): hosts write the whole path
 * into the IPv6 destination as 16-bit uSIDs; every switch consumes its own uSID and forwards on
 * the next one from tables written once.  On the way it marks ECN, trims data packets on deep
 * queues and records per-hop telemetry.  Tables, keys and drop reasons: docs/dataplane.md.
 *
 *              +-------------------------------- ingress ---------------------------------+
 *  frame -->   | packetio    port_admin   stats.rx     srv6          routing      congestion |
 *  (parser)    | PacketOut   port_rx_     port_rx_     usid_un       route_v6     queue_     |
 *              | -> port     admin        counter,     my_sid        route_v4     thresholds |
 *              | (bypass);                parser       (uN shift,    ecmp_select  (trim /    |
 *              | link probe               errors        End, local    ev_direct    early     |
 *              | -> CPU                                 -> CPU)       hop limit    drop)     |
 *              |                                                      telemetry_watch        |
 *              |                                          drop_stats: drop_reasons[reason]   |
 *              +------------------------------------------------------------------------------+
 *                                       | traffic manager: 8 strict-priority queues per port
 *              +-------------------------------- egress ----------------------------------+
 *              | postcard clone?  -> packetio: packet_in + record, truncate -> CPU          |
 *              | otherwise: port_admin (port_tx_admin; link probes pass) -> congestion      |
 *              |   (egress_qdepth, truncate trims, ecn_threshold) -> telemetry (switch_info,|
 *              |   hop record, postcard clone E2E) -> packetio (packet_in on CPU_PORT)      |
 *              |   -> stats (port_tx_counter)                                               |
 *              +------------------------------------------------------------------------------+
 *                                       | deparser (IPv4 checksum recomputed)
 */
#include <core.p4>
#include <v1model.p4>

#include "include/define.p4"
#include "include/headers.p4"
#include "include/parser.p4"
#include "include/control/stats.p4"
#include "include/control/port_admin.p4"
#include "include/control/packetio.p4"
#include "include/control/srv6.p4"
#include "include/control/routing.p4"
#include "include/control/congestion.p4"
#include "include/control/telemetry.p4"

control ingress(inout headers_t hdr,
                inout local_metadata_t lmd,
                inout standard_metadata_t std_md) {
    stats_ingress_rx() stats;
    port_admin_ingress() port_admin;
    packetio_ingress() packetio;
    srv6_ingress() srv6;
    routing_ingress() routing;
    telemetry_ingress() telemetry;
    congestion_ingress() congestion;
    stats_ingress_drops() drop_stats;

    apply {
        /* a packet nobody forwards is dropped, never sent to port 0 */
        mark_to_drop(std_md);
        std_md.priority = PRIORITY_DATA;  /* congestion.p4 lifts control packets, trims and resends */
        packetio.apply(hdr, lmd, std_md);
        port_admin.apply(hdr, lmd, std_md);
        stats.apply(hdr, lmd, std_md);
        srv6.apply(hdr, lmd, std_md);
        routing.apply(hdr, lmd, std_md);
        telemetry.apply(hdr, lmd, std_md);
        congestion.apply(hdr, lmd, std_md);
        drop_stats.apply(hdr, lmd, std_md);
    }
}

control egress(inout headers_t hdr,
               inout local_metadata_t lmd,
               inout standard_metadata_t std_md) {
    port_admin_egress() port_admin;
    congestion_egress() congestion;
    telemetry_egress() telemetry;
    packetio_egress() packetio;
    stats_egress() stats;

    apply {
        if (std_md.instance_type != PKT_INSTANCE_TYPE_EGRESS_CLONE) {
            port_admin.apply(hdr, lmd, std_md);
            if (!lmd.egress_dropped && !lmd.is_packet_out && std_md.egress_port != CPU_PORT) {
                congestion.apply(hdr, lmd, std_md);
                telemetry.apply(hdr, lmd, std_md);
            }
        }
        if (!lmd.egress_dropped) {
            packetio.apply(hdr, lmd, std_md);
        }
        stats.apply(hdr, lmd, std_md);
    }
}

V1Switch(mrc_parser(),
         mrc_verify_checksum(),
         ingress(),
         egress(),
         mrc_compute_checksum(),
         mrc_deparser()) main;
