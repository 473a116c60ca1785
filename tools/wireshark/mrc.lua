-- Wireshark/tshark dissector for MRC (Multipath Reliable Connection) as mrc-fabric puts it on the wire.
--
-- Install (one line, see docs/visualize.md):
--   mkdir -p ~/.local/lib/wireshark/plugins && cp tools/wireshark/mrc.lua ~/.local/lib/wireshark/plugins/
--
-- What it decodes (layouts: mrc/wire/formats.py, docs/protocol.md, docs/dataplane.md):
--   * the uSID carrier of the outer IPv6 destination: block (32 bits) and the 16-bit uSIDs  (mrc.usid.*)
--   * the telemetry Hop-by-Hop option (type 0x3E) with every hop record                    (mrc.telemetry.*)
--   * the MRC SACK header after the AETH of an RC ACK                                        (mrc.sack.*)
--   * PROBE_REQ / PROBE_RESP (BTH opcodes 0xC0 / 0xC1) and PORT_STATUS (0xC2)               (mrc.probe.*, mrc.port_status.*)
--   * trimmed packets (outer DSCP 11, payload and ICRC cut by a switch): BTH + RETH shown,  (mrc.trimmed)
--     no "malformed" or bogus ICRC
--   * data resent after a loss verdict (outer DSCP 34, queued ahead of the data queue)      (mrc.resend)
--   * the BTH of every MRC packet again under mrc.bth.* (so one filter prefix covers MRC)
--
-- Two protocols: "mrc" is a post-dissector that walks the frame itself (outer IPv6, extension
-- headers, inner IPv6, UDP 4791, BTH) and adds the MRC tree; "mrc_roce" takes UDP port 4791 from
-- Wireshark's RoCEv2 dissector only to keep a trimmed packet away from it (it would read the RETH as
-- payload and an ICRC that is not there), and to hand it WRITE Middle / Last / Last with Immediate
-- without the RETH MRC adds to every data packet (the InfiniBand layout has none there: Wireshark would
-- read the RETH as payload and, on Last with Immediate, its first 4 bytes as the immediate); every other
-- packet goes to the InfiniBand dissector as it is.

-- Bit operations: Lua 5.2 (Debian 12's Wireshark 4.0) has bit32; Lua 5.3+ (newer Wireshark builds) has operators
-- instead (that branch is not exercised by the tests here).
local band, rshift, lshift
if bit32 then
    band, rshift, lshift = bit32.band, bit32.rshift, bit32.lshift
else
    band, rshift, lshift = load("return function(a, b) return a & b end, function(a, n) return a >> n end, "
        .. "function(a, n) return (a << n) & 0xFFFFFFFF end")()
end

local DSCP_TRIMMED = 11
local DSCP_RESEND = 34
local ROCE_PORT = 4791
local NH_HBH, NH_ROUTING, NH_IPV6, NH_UDP = 0, 43, 41, 17
local OPT_TELEMETRY, OPT_TELEMETRY_LEN, RECORD_LEN = 0x3E, 84, 20
local OP_ACK, OP_PROBE_REQ, OP_PROBE_RESP, OP_PORT_STATUS = 0x11, 0xC0, 0xC1, 0xC2
local SACK_FIXED_LEN, SACK_FLAG_MRC = 60, 0x80

local OPCODES = {
    [0x06] = "RDMA WRITE First", [0x07] = "RDMA WRITE Middle", [0x08] = "RDMA WRITE Last",
    [0x09] = "RDMA WRITE Last with Immediate", [0x0A] = "RDMA WRITE Only",
    [0x0B] = "RDMA WRITE Only with Immediate", [0x11] = "Acknowledge", [0x81] = "CNP",
    [0xC0] = "MRC PROBE_REQ", [0xC1] = "MRC PROBE_RESP", [0xC2] = "MRC PORT_STATUS",
}
local DATA = { [0x06] = true, [0x07] = true, [0x08] = true, [0x09] = true, [0x0A] = true, [0x0B] = true }
local IMM = { [0x09] = true, [0x0B] = true }
-- data opcodes whose InfiniBand header set has no RETH (MRC puts one on every data packet)
local NO_IBA_RETH = { [0x07] = true, [0x08] = true, [0x09] = true }
local RETH_LEN, BTH_LEN = 16, 12

local mrc = Proto("mrc", "Multipath Reliable Connection (MRC)")
local F = {}
local function add(name, field) F[name] = field end

add("trimmed", ProtoField.bool("mrc.trimmed", "Trimmed by a switch", base.NONE, nil, nil,
    "outer DSCP 11: a switch cut the payload and ICRC off this packet (the receiver sends a trim NACK)"))
add("resend", ProtoField.bool("mrc.resend", "Resent after a loss", base.NONE, nil, nil,
    "outer DSCP 34: data the sender found lost and resent; the switches queue it ahead of the data queue"))
add("dscp", ProtoField.uint8("mrc.dscp", "Outer DSCP", base.DEC))
add("encap", ProtoField.string("mrc.encap", "Encapsulation"))

add("usid", ProtoField.ipv6("mrc.usid.carrier", "uSID carrier (outer destination)"))
add("usid_block", ProtoField.uint32("mrc.usid.block", "Locator block", base.HEX))
add("usid_id", ProtoField.uint16("mrc.usid.id", "uSID", base.HEX))
add("usid_count", ProtoField.uint8("mrc.usid.count", "uSIDs left", base.DEC))
add("usid_active", ProtoField.uint16("mrc.usid.active", "Active uSID (next hop's)", base.HEX))

add("tel", ProtoField.none("mrc.telemetry", "MRC telemetry option"))
add("tel_type", ProtoField.uint8("mrc.telemetry.type", "Option type", base.HEX))
add("tel_len", ProtoField.uint8("mrc.telemetry.length", "Option length", base.DEC))
add("tel_max", ProtoField.uint8("mrc.telemetry.max_hops", "Max hops", base.DEC))
add("tel_count", ProtoField.uint8("mrc.telemetry.hop_count", "Hop count", base.DEC))
add("tel_flags", ProtoField.uint8("mrc.telemetry.flags", "Flags", base.HEX))
add("hop", ProtoField.none("mrc.telemetry.hop", "Hop record"))
add("hop_index", ProtoField.uint8("mrc.telemetry.hop.index", "Hop", base.DEC))
add("hop_switch", ProtoField.uint32("mrc.telemetry.hop.switch_id", "Switch id", base.DEC))
add("hop_in", ProtoField.uint16("mrc.telemetry.hop.ingress_port", "Ingress port", base.DEC))
add("hop_out", ProtoField.uint16("mrc.telemetry.hop.egress_port", "Egress port", base.DEC))
add("hop_ts", ProtoField.uint32("mrc.telemetry.hop.ingress_ts_us", "Ingress timestamp (us)", base.DEC))
add("hop_lat", ProtoField.uint32("mrc.telemetry.hop.hop_latency_us", "Hop latency (us)", base.DEC))
add("hop_qd", ProtoField.uint24("mrc.telemetry.hop.queue_depth", "Queue depth (packets)", base.DEC))
add("hop_qid", ProtoField.uint8("mrc.telemetry.hop.queue_id", "Queue id", base.DEC))

add("bth", ProtoField.none("mrc.bth", "Base Transport Header"))
add("opcode", ProtoField.uint8("mrc.bth.opcode", "Opcode", base.HEX, OPCODES))
add("destqp", ProtoField.uint24("mrc.bth.destqp", "Destination QP", base.HEX))
add("psn", ProtoField.uint24("mrc.bth.psn", "PSN", base.DEC))
add("ackreq", ProtoField.bool("mrc.bth.ackreq", "Ack request"))
add("pkey", ProtoField.uint16("mrc.bth.pkey", "P_Key", base.HEX))
add("reth_va", ProtoField.uint64("mrc.reth.va", "RETH virtual address", base.HEX))
add("reth_rkey", ProtoField.uint32("mrc.reth.rkey", "RETH R_Key", base.HEX))
add("reth_len", ProtoField.uint32("mrc.reth.dmalen", "RETH DMA length", base.DEC))
add("immdt", ProtoField.uint32("mrc.immdt", "Immediate data", base.HEX))
add("aeth_syn", ProtoField.uint8("mrc.aeth.syndrome", "AETH syndrome", base.HEX))
add("aeth_msn", ProtoField.uint24("mrc.aeth.msn", "AETH MSN", base.DEC))
add("payload_len", ProtoField.uint32("mrc.payload_len", "Payload length", base.DEC))

add("sack", ProtoField.none("mrc.sack", "MRC SACK"))
add("sack_flags", ProtoField.uint8("mrc.sack.flags", "Flags", base.HEX))
add("sack_f_mrc", ProtoField.bool("mrc.sack.flags.mrc", "MRC", 8, nil, 0x80))
add("sack_f_trim", ProtoField.bool("mrc.sack.flags.trim", "Trigger arrived trimmed", 8, nil, 0x04))
add("sack_f_ecn", ProtoField.bool("mrc.sack.flags.ecn_echo", "Trigger arrived CE-marked", 8, nil, 0x02))
add("sack_f_retx", ProtoField.bool("mrc.sack.flags.retx_echo", "Trigger was a retransmission", 8, nil, 0x01))
add("sack_cum", ProtoField.uint24("mrc.sack.cum_psn", "Cumulative PSN (next expected)", base.DEC))
add("sack_n_ecn", ProtoField.uint8("mrc.sack.n_ecn", "ECN PSNs", base.DEC))
add("sack_base", ProtoField.uint24("mrc.sack.sack_base", "SACK base PSN", base.DEC))
add("sack_n_trim", ProtoField.uint8("mrc.sack.n_trim", "Trimmed PSNs", base.DEC))
add("sack_trigger", ProtoField.uint24("mrc.sack.trigger_psn", "Trigger PSN", base.DEC))
add("sack_svc", ProtoField.uint32("mrc.sack.service_time_ns", "Service time (ns)", base.DEC))
add("sack_rx", ProtoField.uint64("mrc.sack.received_bytes", "Received bytes", base.DEC))
add("sack_echo", ProtoField.uint32("mrc.sack.ev_echo", "EV echo", base.HEX))
add("sack_bitmap", ProtoField.bytes("mrc.sack.bitmap", "Bitmap (bit i = PSN base+i arrived)"))
add("sack_bits", ProtoField.uint16("mrc.sack.bitmap_count", "PSNs marked in the bitmap", base.DEC))
add("sack_ecn_psn", ProtoField.uint24("mrc.sack.ecn_psn", "CE-marked PSN", base.DEC))
add("sack_trim_psn", ProtoField.uint24("mrc.sack.trim_psn", "Trimmed PSN", base.DEC))

add("probe", ProtoField.none("mrc.probe", "MRC probe"))
add("probe_resp", ProtoField.bool("mrc.probe.response", "Response"))
add("probe_id", ProtoField.uint32("mrc.probe.req_id", "Request id", base.DEC))
add("probe_flags", ProtoField.uint8("mrc.probe.flags", "Flags", base.HEX))
add("probe_port", ProtoField.uint8("mrc.probe.port", "NIC port", base.DEC))
add("probe_ts", ProtoField.uint64("mrc.probe.sender_ts_ns", "Sender timestamp (ns)", base.DEC))
add("probe_svc", ProtoField.uint32("mrc.probe.service_time_ns", "Service time (ns)", base.DEC))
add("probe_echo", ProtoField.uint32("mrc.probe.ev_echo", "EV echo", base.HEX))

add("ps", ProtoField.none("mrc.port_status", "MRC PORT_STATUS"))
add("ps_id", ProtoField.uint32("mrc.port_status.req_id", "Request id", base.DEC))
add("ps_n", ProtoField.uint8("mrc.port_status.n_ports", "NIC ports", base.DEC))
add("ps_mask", ProtoField.uint64("mrc.port_status.up_mask", "Up mask (bit p-1 = port p up)", base.HEX))
add("ps_up", ProtoField.uint8("mrc.port_status.up_port", "Port up", base.DEC))

local fields = {}
for _, f in pairs(F) do fields[#fields + 1] = f end
mrc.fields = fields

local ex_trimmed = ProtoExpert.new("mrc.trimmed.expert", "Payload trimmed by a switch (DSCP 11): "
    .. "headers only, no ICRC; the receiver answers with a trim NACK", expert.group.SEQUENCE, expert.severity.NOTE)
local ex_bad = ProtoExpert.new("mrc.malformed", "MRC header shorter than its layout",
    expert.group.MALFORMED, expert.severity.ERROR)
mrc.experts = { ex_trimmed, ex_bad }

local f_ipv6 = Field.new("ipv6")

-- Walk outer IPv6 .. UDP 4791 from `off` in the frame; nil if this is not an MRC/RoCEv2 packet.
local function walk(tvb, off)
    local n = tvb:len()
    local info = { ips = {}, tel = nil, srh = nil }
    local nh, stop = NH_IPV6, n
    for _ = 1, 8 do
        if nh == NH_IPV6 then
            if off + 40 > stop or rshift(tvb(off, 1):uint(), 4) ~= 6 then return nil end
            local plen = tvb(off + 4, 2):uint()
            if off + 40 + plen < stop then stop = off + 40 + plen end
            info.ips[#info.ips + 1] = off
            nh = tvb(off + 6, 1):uint()
            off = off + 40
        elseif nh == NH_HBH or nh == NH_ROUTING then
            if off + 8 > stop then return nil end
            local hlen = (tvb(off + 1, 1):uint() + 1) * 8
            if off + hlen > stop then return nil end
            if nh == NH_HBH and hlen >= 4 + OPT_TELEMETRY_LEN and tvb(off + 2, 1):uint() == OPT_TELEMETRY
                and tvb(off + 3, 1):uint() == OPT_TELEMETRY_LEN then
                info.tel = off + 2
            elseif nh == NH_ROUTING then
                info.srh = off
            end
            nh = tvb(off, 1):uint()
            off = off + hlen
        elseif nh == NH_UDP then
            if off + 8 + 12 > stop or tvb(off + 2, 2):uint() ~= ROCE_PORT then return nil end
            info.udp, info.bth, info.stop = off, off + 8, stop
            return info
        else
            return nil
        end
    end
    return nil
end

local function dscp_of(tvb, ip)
    return rshift(tvb(ip, 2):uint(), 6) % 64
end

local function add_usid(tree, tvb, ip)
    local dst = tvb(ip + 24, 16)
    local t = tree:add(F.usid, dst)
    t:add(F.usid_block, tvb(ip + 24, 4))
    -- the carrier holds the uSIDs up to the last non-zero one: it ends where the whole Argument
    -- (every bit after the active uSID) is zero, not at the first zero uSID (RFC 9800 4.1.1, as
    -- the switches judge it: p4src/include/control/srv6.p4)
    local count = 0
    for i = 0, 5 do
        if tvb(ip + 28 + 2 * i, 2):uint() ~= 0 then count = i + 1 end
    end
    for i = 0, count - 1 do
        local r = tvb(ip + 28 + 2 * i, 2)
        if i == 0 then t:add(F.usid_active, r) end
        t:add(F.usid_id, r)
    end
    t:add(F.usid_count, count):set_generated()
    t:append_text(string.format(" (block %08x, %d uSID%s)", tvb(ip + 24, 4):uint(), count, count == 1 and "" or "s"))
end

local function add_telemetry(tree, tvb, o)
    local t = tree:add(F.tel, tvb(o, 2 + OPT_TELEMETRY_LEN))
    t:add(F.tel_type, tvb(o, 1))
    t:add(F.tel_len, tvb(o + 1, 1))
    t:add(F.tel_max, tvb(o + 2, 1))
    t:add(F.tel_count, tvb(o + 3, 1))
    t:add(F.tel_flags, tvb(o + 4, 1))
    local max_hops, count = tvb(o + 2, 1):uint(), tvb(o + 3, 1):uint()
    local filled = math.min(count, max_hops, 4)
    t:append_text(string.format(": %d hop record%s", filled, filled == 1 and "" or "s"))
    for i = 0, filled - 1 do
        local r = o + 6 + i * RECORD_LEN
        local h = t:add(F.hop, tvb(r, RECORD_LEN))
        h:add(F.hop_index, i + 1):set_generated()
        h:add(F.hop_switch, tvb(r, 4))
        h:add(F.hop_in, tvb(r + 4, 2))
        h:add(F.hop_out, tvb(r + 6, 2))
        h:add(F.hop_ts, tvb(r + 8, 4))
        h:add(F.hop_lat, tvb(r + 12, 4))
        h:add(F.hop_qd, tvb(r + 16, 3))
        h:add(F.hop_qid, tvb(r + 19, 1))
        h:append_text(string.format(" %d: switch %d, port %d -> %d, %d us, queue %d", i + 1, tvb(r, 4):uint(),
            tvb(r + 4, 2):uint(), tvb(r + 6, 2):uint(), tvb(r + 12, 4):uint(), tvb(r + 16, 3):uint()))
    end
end

local function add_sack(tree, tvb, h, stop)
    local t = tree:add(F.sack, tvb(h, stop - h))
    local ft = t:add(F.sack_flags, tvb(h, 1))
    ft:add(F.sack_f_mrc, tvb(h, 1)); ft:add(F.sack_f_trim, tvb(h, 1))
    ft:add(F.sack_f_ecn, tvb(h, 1)); ft:add(F.sack_f_retx, tvb(h, 1))
    t:add(F.sack_cum, tvb(h + 1, 3))
    t:add(F.sack_n_ecn, tvb(h + 4, 1))
    t:add(F.sack_base, tvb(h + 5, 3))
    t:add(F.sack_n_trim, tvb(h + 8, 1))
    t:add(F.sack_trigger, tvb(h + 9, 3))
    t:add(F.sack_svc, tvb(h + 12, 4))
    t:add(F.sack_rx, tvb(h + 16, 8))
    t:add(F.sack_echo, tvb(h + 24, 4))
    t:add(F.sack_bitmap, tvb(h + 28, 32))
    local bits = 0
    for i = 0, 31 do
        local v = tvb(h + 28 + i, 1):uint()
        while v > 0 do bits = bits + v % 2; v = math.floor(v / 2) end
    end
    t:add(F.sack_bits, bits):set_generated()
    local n_ecn, n_trim = tvb(h + 4, 1):uint(), tvb(h + 8, 1):uint()
    local l = h + SACK_FIXED_LEN
    if l + 4 * (n_ecn + n_trim) > stop then
        t:add_proto_expert_info(ex_bad, "SACK lists longer than the packet")
        return
    end
    for i = 0, n_ecn - 1 do t:add(F.sack_ecn_psn, tvb(l + 4 * i + 1, 3)) end
    for i = 0, n_trim - 1 do t:add(F.sack_trim_psn, tvb(l + 4 * (n_ecn + i) + 1, 3)) end
    t:append_text(string.format(": cum %d, base %d, %d in bitmap, trigger %d, %d ECN, %d trimmed",
        tvb(h + 1, 3):uint(), tvb(h + 5, 3):uint(), bits, tvb(h + 9, 3):uint(), n_ecn, n_trim))
end

function mrc.dissector(tvb, pinfo, tree)
    local ipf = f_ipv6()
    if ipf == nil then return end
    local info = walk(tvb, ipf.offset)
    if info == nil then return end
    local outer, b = info.ips[1], info.bth
    local op = tvb(b, 1):uint()
    local dscp = dscp_of(tvb, outer)
    local trimmed = dscp == DSCP_TRIMMED and DATA[op] == true
    local root = tree:add(mrc, tvb(outer, info.stop - outer))
    root:add(F.dscp, dscp):set_generated()
    if trimmed then root:add(F.trimmed, true):set_generated() end  -- present only on trimmed packets
    if dscp == DSCP_RESEND and DATA[op] == true then root:add(F.resend, true):set_generated() end
    local encap = (#info.ips > 1) and "srv6" or "stev/udp"
    root:add(F.encap, encap):set_generated()
    if #info.ips > 1 then add_usid(root, tvb, outer) end
    if info.tel then add_telemetry(root, tvb, info.tel) end

    local bt = root:add(F.bth, tvb(b, 12))
    bt:add(F.opcode, tvb(b, 1))
    bt:add(F.pkey, tvb(b + 2, 2))
    bt:add(F.destqp, tvb(b + 5, 3))
    bt:add(F.ackreq, tvb(b + 8, 1):uint() >= 128)
    bt:add(F.psn, tvb(b + 9, 3))
    local h = b + 12
    local body_end = trimmed and info.stop or info.stop - 4  -- the ICRC, unless a switch cut it
    local what = OPCODES[op] or string.format("opcode 0x%02x", op)
    local summary
    if DATA[op] and h + 16 <= body_end then
        bt:add(F.reth_va, tvb(h, 8)); bt:add(F.reth_rkey, tvb(h + 8, 4)); bt:add(F.reth_len, tvb(h + 12, 4))
        h = h + 16
        if IMM[op] and h + 4 <= body_end then bt:add(F.immdt, tvb(h, 4)); h = h + 4 end
        root:add(F.payload_len, body_end - h):set_generated()
        summary = string.format("%s QP=0x%06x PSN=%d", what, tvb(b + 5, 3):uint(), tvb(b + 9, 3):uint())
    elseif op == OP_ACK and h + 4 <= body_end then
        bt:add(F.aeth_syn, tvb(h, 1)); bt:add(F.aeth_msn, tvb(h + 1, 3))
        if body_end - (h + 4) >= SACK_FIXED_LEN and band(tvb(h + 4, 1):uint(), SACK_FLAG_MRC) ~= 0 then
            add_sack(root, tvb, h + 4, body_end)
            summary = string.format("SACK QP=0x%06x cum=%d trigger=%d", tvb(b + 5, 3):uint(), tvb(h + 5, 3):uint(),
                tvb(h + 13, 3):uint())
            local syn = tvb(h, 1):uint()
            if rshift(syn, 5) == 1 then  -- receiver not ready: MRC's RNR NAK rides in a SACK (docs/protocol.md)
                summary = string.format("RNR NAK (timer %d) ", band(syn, 0x1F)) .. summary
            end
        else
            summary = string.format("%s QP=0x%06x PSN=%d syndrome=0x%02x", tvb(h, 1):uint() == 0 and "ACK" or "NAK",
                tvb(b + 5, 3):uint(), tvb(b + 9, 3):uint(), tvb(h, 1):uint())
        end
    elseif (op == OP_PROBE_REQ or op == OP_PROBE_RESP) and body_end - h >= 24 then
        local t = root:add(F.probe, tvb(h, 24))
        t:add(F.probe_resp, op == OP_PROBE_RESP):set_generated()
        t:add(F.probe_id, tvb(h, 4)); t:add(F.probe_flags, tvb(h + 4, 1)); t:add(F.probe_port, tvb(h + 5, 1))
        t:add(F.probe_ts, tvb(h + 8, 8)); t:add(F.probe_svc, tvb(h + 16, 4)); t:add(F.probe_echo, tvb(h + 20, 4))
        summary = string.format("%s id=%d port=%d", op == OP_PROBE_REQ and "PROBE_REQ" or "PROBE_RESP",
            tvb(h, 4):uint(), tvb(h + 5, 1):uint())
    elseif op == OP_PORT_STATUS and body_end - h >= 16 then
        local t = root:add(F.ps, tvb(h, 16))
        t:add(F.ps_id, tvb(h, 4)); t:add(F.ps_n, tvb(h + 4, 1)); t:add(F.ps_mask, tvb(h + 8, 8))
        local n, mask = tvb(h + 4, 1):uint(), tvb(h + 12, 4):uint()
        local ups = {}
        for p = 1, math.min(n, 32) do
            if band(mask, lshift(1, p - 1)) ~= 0 then
                t:add(F.ps_up, p):set_generated(); ups[#ups + 1] = tostring(p)
            end
        end
        summary = string.format("PORT_STATUS id=%d up=[%s] of %d", tvb(h, 4):uint(), table.concat(ups, ","), n)
    elseif DATA[op] or op == OP_ACK or op >= OP_PROBE_REQ then
        root:add_proto_expert_info(ex_bad)
        summary = what
    else
        summary = what
    end
    if trimmed then
        root:add_proto_expert_info(ex_trimmed)
        summary = "TRIMMED " .. summary
    end
    root:append_text(", " .. summary)
    pinfo.cols.protocol = "MRC"
    pinfo.cols.info = "MRC " .. summary
end

register_postdissector(mrc)

-- UDP 4791: keep trimmed packets away from the InfiniBand dissector, hand it everything else.
local roce = Proto("mrc_roce", "MRC RoCEv2 dispatch")
roce.prefs.mrc_reth = Pref.bool("RETH on every RDMA WRITE packet (MRC)", true,
    "Hand Wireshark's InfiniBand dissector RDMA WRITE Middle / Last / Last with Immediate without the RETH "
    .. "MRC puts on every data packet. Turn off for captures of other RoCEv2 traffic (IBA layout).")
local f_dscp = Field.new("ipv6.tclass.dscp")
local ib = DissectorTable.get("udp.port"):get_dissector(ROCE_PORT) or Dissector.get("infiniband")

function roce.dissector(tvb, pinfo, tree)
    local d = { f_dscp() }
    local op = tvb:len() > 0 and tvb(0, 1):uint() or 0
    if #d > 0 and d[1]() == DSCP_TRIMMED and DATA[op] then
        tree:add(roce, tvb(), "RoCEv2 headers of a trimmed packet (no payload, no ICRC): decoded under MRC")
        return tvb:len()
    end
    if roce.prefs.mrc_reth and NO_IBA_RETH[op] and tvb:len() >= BTH_LEN + RETH_LEN + 4 then
        -- the InfiniBand layout of this opcode: BTH [ImmDt] payload ICRC, without MRC's RETH
        tree:add(roce, tvb(BTH_LEN, RETH_LEN), "MRC RETH (every MRC data packet has one): decoded under MRC; "
            .. "the InfiniBand tree below is the packet without it")
        local ba = tvb(0, BTH_LEN):bytes()
        ba:append(tvb(BTH_LEN + RETH_LEN):bytes())
        ib:call(ba:tvb("RoCEv2 without MRC's RETH"), pinfo, tree)
        return tvb:len()
    end
    return ib:call(tvb, pinfo, tree)
end

DissectorTable.get("udp.port"):add(ROCE_PORT, roce)
