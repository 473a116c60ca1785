/* port_admin.p4 -- per-port administrative state held in the data plane.
 *
 * A port is administratively down while an entry for it exists in `port_rx_admin` (ingress,
 * keyed on the ingress port) and `port_tx_admin` (egress, keyed on the egress port).  Packets
 * arriving on or leaving through a down port are dropped and counted as
 * DROP_REASON_PORT_ADMIN_DOWN, so failures can be injected without touching links.  Deleting
 * the entries brings the port back up.  Link probes (ETHERTYPE_LINK_PROBE) pass a down port both
 * ways: the cable is still there, and the wiring check reports cables, not admin state.
 */
#ifndef MRC_PORT_ADMIN_P4
#define MRC_PORT_ADMIN_P4

control port_admin_ingress(inout headers_t hdr,
                           inout local_metadata_t lmd,
                           inout standard_metadata_t std_md) {
    direct_counter(CounterType.packets_and_bytes) port_rx_admin_counter;

    action set_port_down() {
        mark_to_drop(std_md);
        lmd.drop_reason = DROP_REASON_PORT_ADMIN_DOWN;
        lmd.skip_forwarding = true;
    }

    table port_rx_admin {
        key = {
            std_md.ingress_port: exact @name("port");
        }
        actions = {
            set_port_down;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        counters = port_rx_admin_counter;
        size = MAX_PORTS;
    }

    apply {
        if (!lmd.skip_forwarding) {
            port_rx_admin.apply();
        }
    }
}

control port_admin_egress(inout headers_t hdr,
                          inout local_metadata_t lmd,
                          inout standard_metadata_t std_md) {
    direct_counter(CounterType.packets_and_bytes) port_tx_admin_counter;

    action set_port_down() {
        mark_to_drop(std_md);
        lmd.drop_reason = DROP_REASON_PORT_ADMIN_DOWN;
        lmd.egress_dropped = true;
    }

    table port_tx_admin {
        key = {
            std_md.egress_port: exact @name("port");
        }
        actions = {
            set_port_down;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        counters = port_tx_admin_counter;
        size = MAX_PORTS;
    }

    apply {
        if (!lmd.link_probe) {
            port_tx_admin.apply();
        }
    }
}

#endif  /* MRC_PORT_ADMIN_P4 */
