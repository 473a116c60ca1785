/* Exercises most of the softswitch P4 subset in one program. */
#include <core.p4>
#include <v1model.p4>

#define MAX_SEGS 4
#if MAX_SEGS > 2 && defined(MAX_SEGS)
#define HAS_STACK 1
#else
#error "need a stack"
#endif
#define ADD1(x) ((x) + 1)

const bit<16> ETH_IPV6 = 16w0x86dd;
typedef bit<48> mac_t;
enum bit<8> Proto { UDP = 17, TCP = 6 }
enum Color { GREEN, YELLOW, RED }
error { BadVersion }

header eth_t { mac_t dst; mac_t src; bit<16> type_; }
header ipv6_t { bit<4> version; bit<6> dscp; bit<2> ecn; bit<20> fl; bit<16> plen;
                bit<8> nh; bit<8> hl; bit<128> src; bit<128> dst; }
header seg_t { bit<128> sid; }
header udp_t { bit<16> sport; bit<16> dport; bit<16> len; bit<16> csum; }
header ipv4_t { bit<4> v; bit<4> ihl; bit<8> tos; bit<16> len; bit<16> id; bit<3> fl; bit<13> off;
                bit<8> ttl; bit<8> proto; bit<16> csum; bit<32> src; bit<32> dst; }
struct headers_t { eth_t eth; ipv4_t ipv4; ipv6_t ipv6; seg_t[MAX_SEGS] segs; udp_t udp; }
struct meta_t { @field_list(1) bit<8> nsegs; bit<32> hash; bit<2> color; @field_list(1, 2) bit<9> port; }
struct digest_t { mac_t src; bit<9> port; }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.eth);
        transition select(h.eth.type_) {
            ETH_IPV6: ipv6;
            0x0800 &&& 0xffff: ipv4;
            0x9000 .. 0x90ff: accept;
            _: accept;
        }
    }
    state ipv4 { pkt.extract(h.ipv4); verify(h.ipv4.v == 4, error.BadVersion); transition accept; }
    state ipv6 {
        pkt.extract(h.ipv6);
        m.nsegs = 0;
        transition select(h.ipv6.nh, h.ipv6.hl) { (43, _): segs; (Proto.UDP, _): udp; default: accept; }
    }
    state segs {
        pkt.extract(h.segs.next);
        m.nsegs = ADD1(m.nsegs);
        bit<8> peek = pkt.lookahead<bit<8>>();
        transition select(m.nsegs < MAX_SEGS && peek != 0) { true: segs; false: udp; }
    }
    state udp { pkt.extract(h.udp); transition accept; }
}

control VC(inout headers_t h, inout meta_t m) {
    apply {
        verify_checksum(h.ipv4.isValid(), { h.ipv4.v, h.ipv4.ihl, h.ipv4.tos, h.ipv4.len, h.ipv4.id,
            h.ipv4.fl, h.ipv4.off, h.ipv4.ttl, h.ipv4.proto, h.ipv4.src, h.ipv4.dst }, h.ipv4.csum,
            HashAlgorithm.csum16);
    }
}

control Ig(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    counter(64, CounterType.packets) c;
    direct_counter(CounterType.bytes) dc;
    meter(16, MeterType.packets) mt;
    direct_meter<bit<2>>(MeterType.bytes) dm;
    register<bit<32>>(256) r;
    action_selector(HashAlgorithm.crc32, 1024, 16) sel;
    action_profile(64) prof;

    action drop() { mark_to_drop(sm); }
    action fwd(bit<9> port) { sm.egress_spec = port; dc.count(); }
    action meter_it() { dm.read(m.color); }
    action set_port(bit<9> p) { sm.egress_spec = p; }
    action shift(in bit<8> n) { h.ipv6.dst = h.ipv6.dst << 16; h.ipv6.hl = h.ipv6.hl |-| n; }

    table t_exact { key = { h.eth.dst: exact; h.ipv6.isValid(): exact; } actions = { fwd; drop; }
                    counters = dc; default_action = drop(); }
    table t_lpm { key = { h.ipv6.dst: lpm; } actions = { set_port; NoAction; } size = 512;
                  const entries = { 0x20010db8000000000000000000000000 &&& 0xffffffff000000000000000000000000 : set_port(1);
                                    0x20010db8000000000000000000000001 : set_port(2); } }
    table t_tern { key = { h.udp.dport: ternary; h.udp.sport: range; m.port: optional; }
                   actions = { meter_it; drop; } meters = dm;
                   const entries = { (0x1000 &&& 0xf000, 1 .. 100, _): drop();
                                     (_, _, 5): meter_it(); } }
    table t_sel { key = { h.ipv6.dst[127:64]: exact; h.ipv6.fl: selector; h.udp.sport: selector; }
                  actions = { set_port; } implementation = sel; }
    table t_prof { key = { sm.ingress_port: exact; } actions = { set_port; } implementation = prof; }

    apply {
        mark_to_drop(sm);
        c.count((bit<32>) sm.ingress_port);
        mt.execute_meter((bit<32>) sm.ingress_port, m.color);
        bit<32> v;
        r.read(v, 0);
        r.write(0, v |+| 1);
        hash(m.hash, HashAlgorithm.crc16, 32w0, { h.ipv6.src, h.ipv6.dst, h.udp.sport }, 32w65536);
        random(m.hash, 0, 100);
        switch (t_exact.apply().action_run) {
            fwd: { t_lpm.apply(); }
            drop: {}
        }
        if (t_tern.apply().hit) { t_sel.apply(); } else if (!t_prof.apply().miss) { exit; }
        Color col = (m.color == 2) ? Color.RED : Color.GREEN;
        switch (col) { Color.RED: { drop(); } default: { shift(8w1); } }
        switch (m.nsegs) { 0: { } 1: 2: { h.segs.pop_front(1); } default: { h.segs.push_front(2); } }
        if (h.segs[1].isValid() && h.segs[m.nsegs[1:0]].sid == 0) { h.segs[0].setInvalid(); }
        h.ipv6.dst[15:0] = h.ipv6.src[127:112];
        bit<64> cat = h.ipv6.src[63:32] ++ (bit<32>) h.ipv6.fl;
        h.ipv6.fl = (bit<20>) cat;
        int<8> s = -8s3;
        h.ipv6.hl = (bit<8>) (s >> 1);
        if (h.eth.src == 0) { digest<digest_t>(1, { h.eth.src, sm.ingress_port }); }
        if (sm.instance_type == 0) { clone_preserving_field_list(CloneType.I2E, 5, 1); }
        if (sm.parser_error == error.BadVersion) { resubmit_preserving_field_list(2); }
        log_msg("port {}", { sm.ingress_port });
        assert(sm.ingress_port != 511);
    }
}

control Eg(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        if (sm.enq_qdepth > 10) { h.ipv6.ecn = 3; truncate(64); }
        if (sm.instance_type == 1) { recirculate_preserving_field_list(1); }
    }
}
control CC(inout headers_t h, inout meta_t m) {
    apply {
        update_checksum(h.ipv4.isValid(), { h.ipv4.v, h.ipv4.ihl, h.ipv4.tos, h.ipv4.len, h.ipv4.id,
            h.ipv4.fl, h.ipv4.off, h.ipv4.ttl, h.ipv4.proto, h.ipv4.src, h.ipv4.dst }, h.ipv4.csum,
            HashAlgorithm.csum16);
        update_checksum_with_payload(h.udp.isValid(), { h.ipv6.src, h.ipv6.dst, 16w17, h.udp.sport },
            h.udp.csum, HashAlgorithm.csum16);
    }
}
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h); } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
