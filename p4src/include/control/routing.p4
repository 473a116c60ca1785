/* routing.p4 -- static routing (route_v6 / route_v4), ECMP and EV-direct groups, hop limit.
 *
 *   route_v6 (LPM on the IPv6 DA after uSID processing) / route_v4 (LPM on the IPv4 DA)
 *      set_next_hop(port, dst_mac, src_mac)   -> done
 *      set_ecmp_group(group_id)               -> ecmp_select: hash of the flow fields picks a member
 *      set_ev_direct_group(group_id)          -> ev_direct: the entropy value picks the member
 *      drop_usid_unknown()                    -> our block, a uSID that is not ours (/32 entry)
 *      drop_no_route()                        (default)
 *
 * The entropy value (EV) matched by ev_direct is MRC's STEV value:
 *      ev = udp_sport << 16 | (flow_label & 0xffff)         (flow label 0 for IPv4)
 * so UDP-mode EVs sit in ev[31:16] and STEV EVs fill all 32 bits.
 *
 * Hop limit: every packet that gets a next hop here has its IPv6 hop limit (IPv4 TTL)
 * decremented exactly once; a packet arriving with 1 or 0 is dropped (DROP_REASON_HOP_LIMIT).
 */
#ifndef MRC_ROUTING_P4
#define MRC_ROUTING_P4

control routing_ingress(inout headers_t hdr,
                        inout local_metadata_t lmd,
                        inout standard_metadata_t std_md) {
    direct_counter(CounterType.packets_and_bytes) route_v6_counter;
    direct_counter(CounterType.packets_and_bytes) route_v4_counter;
    direct_counter(CounterType.packets_and_bytes) ecmp_select_counter;
    direct_counter(CounterType.packets_and_bytes) ev_direct_counter;

    @max_group_size(64)
    action_selector(HashAlgorithm.crc16, 32w1024, 32w16) ecmp_selector;

    action drop_with(drop_reason_t reason) {
        mark_to_drop(std_md);
        lmd.drop_reason = reason;
        lmd.forwarded = false;
        lmd.skip_forwarding = true;
    }

    action set_next_hop(port_num_t port,
                        @format(MAC_ADDRESS) mac_addr_t dst_mac,
                        @format(MAC_ADDRESS) mac_addr_t src_mac) {
        std_md.egress_spec = port;
        hdr.ethernet.dst_addr = dst_mac;
        hdr.ethernet.src_addr = src_mac;
        lmd.forwarded = true;
    }

    action set_ecmp_group(group_id_t group_id) {
        lmd.group_id = group_id;
        lmd.use_ecmp = true;
    }

    action set_ev_direct_group(group_id_t group_id) {
        lmd.group_id = group_id;
        lmd.use_ev_direct = true;
    }

    action drop_usid_unknown() {
        mark_to_drop(std_md);
        lmd.drop_reason = DROP_REASON_USID_UNKNOWN;
        lmd.skip_forwarding = true;
    }

    action drop_no_route() {
        mark_to_drop(std_md);
        lmd.drop_reason = DROP_REASON_NO_ROUTE;
        lmd.skip_forwarding = true;
    }

    table route_v6 {
        key = {
            hdr.ipv6.dst_addr: lpm @name("dst_addr") @format(IPV6_ADDRESS);
        }
        actions = {
            set_next_hop;
            set_ecmp_group;
            set_ev_direct_group;
            drop_usid_unknown;
            drop_no_route;
        }
        default_action = drop_no_route();
        counters = route_v6_counter;
        size = 4096;
    }

    table route_v4 {
        key = {
            hdr.ipv4.dst_addr: lpm @name("dst_addr") @format(IPV4_ADDRESS);
        }
        actions = {
            set_next_hop;
            set_ecmp_group;
            set_ev_direct_group;
            drop_no_route;
        }
        default_action = drop_no_route();
        counters = route_v4_counter;
        size = 1024;
    }

    /* The selector hashes the flow: addresses (inner ones in SRv6 mode), protocol, UDP ports
     * and the flow label -- the two places MRC's STEV mode stripes its entropy value. */
    table ecmp_select {
        key = {
            lmd.group_id: exact @name("group_id");
            lmd.flow_src: selector;
            lmd.flow_dst: selector;
            lmd.ip_proto: selector;
            lmd.l4_sport: selector;
            lmd.l4_dport: selector;
            lmd.flow_label: selector;
        }
        actions = {
            set_next_hop;
        }
        implementation = ecmp_selector;
        counters = ecmp_select_counter;
        size = 1024;
    }

    table ev_direct {
        key = {
            lmd.group_id: exact @name("group_id");
            lmd.ev: ternary @name("ev");
        }
        actions = {
            set_next_hop;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        counters = ev_direct_counter;
        size = 4096;
    }

    apply {
        if (!lmd.skip_forwarding) {
            if (hdr.ipv6.isValid()) {
                route_v6.apply();
            } else if (hdr.ipv4.isValid()) {
                route_v4.apply();
            } else {
                drop_with(DROP_REASON_NOT_IP);
            }

            if (lmd.use_ecmp) {
                if (!ecmp_select.apply().hit) {
                    drop_with(DROP_REASON_NO_ROUTE);
                }
            } else if (lmd.use_ev_direct) {
                lmd.ev = lmd.l4_sport ++ lmd.flow_label[15:0];
                if (!ev_direct.apply().hit) {
                    drop_with(DROP_REASON_NO_ROUTE);
                }
            }

            if (lmd.forwarded) {
                if (hdr.ipv6.isValid()) {
                    if (hdr.ipv6.hop_limit <= 1) {
                        drop_with(DROP_REASON_HOP_LIMIT);
                    } else {
                        hdr.ipv6.hop_limit = hdr.ipv6.hop_limit - 1;
                    }
                } else if (hdr.ipv4.isValid()) {
                    if (hdr.ipv4.ttl <= 1) {
                        drop_with(DROP_REASON_HOP_LIMIT);
                    } else {
                        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
                    }
                }
            }
        }
    }
}

#endif  /* MRC_ROUTING_P4 */
