/* srv6.p4 -- SRv6 uSID (uN, RFC 9800 NEXT-C-SID with a 32-bit block and 16-bit uSIDs) and
 * classic SRH End (RFC 8754 / RFC 8986) on the outer (or only) IPv6 header.
 *
 *   usid_un hit (DA[127:80] = our block + uSID):
 *     Argument DA[79:0] != 0     -> shift: DA = block ++ DA[79:0] ++ 0x0000, then route
 *                                   (RFC 9800 4.1.1: the Argument is every bit after the active
 *                                   uSID, not only the next uSID; the SRH is not looked at)
 *     Argument == 0 (carrier ends here)
 *        SRH with segments left   -> End: SL -= 1, DA = segment_list[SL], then route
 *        otherwise                -> local: MRC probe/port status to the CPU, else drop
 *   my_sid hit (DA = one of our full 128-bit SIDs): the same End / local step.
 *   End / local with an extension header the parser could not take (SRH parser errors: another
 *   routing type, more than 4 segments, a segment list longer than hdr_ext_len, TLVs over 120
 *   bytes, segments_left > last_entry + 1; a Hop-by-Hop or Destination Options header over 128
 *   bytes): dropped, PARSER_ERROR.  A uN shift needs none of them and forwards (RFC 9800 4.1.1
 *   shifts before any extension header but Hop-by-Hop and Destination Options is processed: before
 *   the SRH's own checks, and before a routing header of another type, whatever its segments left).
 *   miss: transit, routed on the DA as it is, whatever routing header follows (RFC 8754 4.2).
 *
 * The hop limit is NOT touched here: routing decrements it once per switch for every packet
 * it forwards (see routing.p4), so a uSID hop, an End and a plain transit all cost one.
 */
#ifndef MRC_SRV6_P4
#define MRC_SRV6_P4

control srv6_ingress(inout headers_t hdr,
                     inout local_metadata_t lmd,
                     inout standard_metadata_t std_md) {
    direct_counter(CounterType.packets_and_bytes) usid_un_counter;
    direct_counter(CounterType.packets_and_bytes) my_sid_counter;

    /* uN: block + this switch's uSID is on top of the carrier. */
    action un() { }

    /* End: one of this switch's full SIDs. */
    action srv6_end() { }

    table usid_un {
        key = {
            lmd.dst_block_usid: exact @name("block_usid");
        }
        actions = {
            un;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        counters = usid_un_counter;
        size = 64;
    }

    table my_sid {
        key = {
            hdr.ipv6.dst_addr: exact @name("sid") @format(IPV6_ADDRESS);
        }
        actions = {
            srv6_end;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        counters = my_sid_counter;
        size = 64;
    }

    apply {
        if (hdr.ipv6.isValid() && !lmd.skip_forwarding) {
            bool ours = false;
            bool end_here = false;
            lmd.dst_block_usid = hdr.ipv6.dst_addr[127:128 - USID_BLOCK_BITS - USID_BITS];
            if (usid_un.apply().hit) {
                ours = true;
                /* RFC 9800 4.1.1: the carrier ends when the whole Argument (everything after the
                 * active uSID) is zero, not only the next uSID */
                end_here = hdr.ipv6.dst_addr[127 - USID_BLOCK_BITS - USID_BITS:0] == 0;
            } else if (my_sid.apply().hit) {
                ours = true;
                end_here = true;
            }

            if (ours && !end_here) {
                /* uN shift: needs nothing behind the IPv6 header, so an SRH (or options header)
                 * the parser could not take does not stop it; nor does a routing header of another
                 * type, which RFC 8200 4.4 would discard with segments left: RFC 9800 4.1.1 shifts
                 * before any extension header but Hop-by-Hop and Destination Options is processed */
                hdr.ipv6.dst_addr = hdr.ipv6.dst_addr[127:128 - USID_BLOCK_BITS] ++
                                    hdr.ipv6.dst_addr[127 - USID_BLOCK_BITS - USID_BITS:0] ++ (bit<USID_BITS>) 0;
            } else if (end_here && lmd.srh_error) {
                /* End / local at our SID, and an extension header the parser could not take
                 * (stats.p4): the SRH or the upper layer behind it is unknown, drop */
                mark_to_drop(std_md);
                lmd.drop_reason = DROP_REASON_PARSER_ERROR;
                lmd.skip_forwarding = true;
            } else if (end_here) {
                if (hdr.srh.isValid() && hdr.srh.segments_left > 0) {
                    /* the parser guarantees segments_left <= last_entry + 1 <= 4 */
                    hdr.srh.segments_left = hdr.srh.segments_left - 1;
                    if (hdr.srh.segments_left == 0) {
                        hdr.ipv6.dst_addr = hdr.srh_segments[0].sid;
                    } else if (hdr.srh.segments_left == 1) {
                        hdr.ipv6.dst_addr = hdr.srh_segments[1].sid;
                    } else if (hdr.srh.segments_left == 2) {
                        hdr.ipv6.dst_addr = hdr.srh_segments[2].sid;
                    } else {
                        hdr.ipv6.dst_addr = hdr.srh_segments[3].sid;
                    }
                } else {
                    /* The path ends at this switch: only MRC probes and port-status messages
                     * are addressed to a switch; they go to the controller. */
                    lmd.skip_forwarding = true;
                    if (hdr.bth.isValid() &&
                            (hdr.bth.opcode == BTH_OP_MRC_PROBE_REQ ||
                             hdr.bth.opcode == BTH_OP_MRC_PROBE_RESP ||
                             hdr.bth.opcode == BTH_OP_MRC_PORT_STATUS)) {
                        std_md.egress_spec = CPU_PORT;
                        lmd.packet_in_reason = PACKET_IN_REASON_PROBE;
                    } else {
                        mark_to_drop(std_md);
                        lmd.drop_reason = DROP_REASON_LOCAL_NOT_PROBE;
                    }
                }
            }
        }
    }
}

#endif  /* MRC_SRV6_P4 */
