/* Execution-core test program: one feature per tag.kind value (see test_pipeline.py). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header ipv4_t { bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> total_len; bit<16> identification;
                bit<3> flags; bit<13> frag_offset; bit<8> ttl; bit<8> protocol; bit<16> hdr_checksum;
                bit<32> src; bit<32> dst; }
header udp_t { bit<16> sport; bit<16> dport; bit<16> len; bit<16> csum; }
header tag_t { bit<8> kind; bit<8> arg; }

struct headers_t { ethernet_t eth; ipv4_t ipv4; udp_t udp; tag_t tag; }
struct learn_t { bit<48> src; bit<9> port; }
struct meta_t {
    @field_list(1) bit<8> passes;
    @field_list(1, 2) bit<32> mark;
    bit<8> color;
    bit<16> hash_out;
    bit<32> reg_val;
}

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.eth); transition select(h.eth.ether_type) { 0x0800: ipv4; default: accept; } }
    state ipv4 { pkt.extract(h.ipv4); transition select(h.ipv4.protocol) { 17: udp; default: accept; } }
    state udp { pkt.extract(h.udp); transition select(h.udp.dport) { 0x1234: tag; default: accept; } }
    state tag { pkt.extract(h.tag); transition accept; }
}

control VC(inout headers_t h, inout meta_t m) {
    apply {
        verify_checksum(h.ipv4.isValid(),
            { h.ipv4.version, h.ipv4.ihl, h.ipv4.diffserv, h.ipv4.total_len, h.ipv4.identification,
              h.ipv4.flags, h.ipv4.frag_offset, h.ipv4.ttl, h.ipv4.protocol, h.ipv4.src, h.ipv4.dst },
            h.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    counter(16, CounterType.packets_and_bytes) rx;
    meter(4, MeterType.packets) m0;
    register<bit<32>>(8) regs;
    action_selector(HashAlgorithm.crc16, 32w64, 32w16) sel;
    direct_counter(CounterType.packets_and_bytes) exact_hits;

    action drop() { mark_to_drop(sm); }
    action fwd(bit<9> port) { sm.egress_spec = port; }
    action fwd_count(bit<9> port) { sm.egress_spec = port; exact_hits.count(); }
    table t_exact { key = { h.eth.dst: exact; } actions = { fwd_count; NoAction; }
                    default_action = NoAction(); counters = exact_hits; }
    table t_lpm { key = { h.ipv4.dst: lpm; } actions = { fwd; drop; } default_action = drop(); }
    table t_acl { key = { h.ipv4.protocol: ternary; h.udp.dport: range; h.ipv4.src: optional; }
                  actions = { drop; NoAction; } default_action = NoAction(); }
    table t_ecmp { key = { h.ipv4.dst: exact; h.ipv4.src: selector; h.udp.sport: selector; }
                   actions = { fwd; } implementation = sel; }
    table t_const { key = { h.tag.arg: exact; } actions = { fwd; NoAction; } default_action = NoAction();
                    const entries = { 7 : fwd(7); 8 : fwd(8); } }

    apply {
        rx.count((bit<32>) sm.ingress_port);
        mark_to_drop(sm);
        if (sm.instance_type == 4) {          // recirculated: port from the preserved field
            sm.egress_spec = (bit<9>) m.passes;
            return;
        }
        if (!h.tag.isValid()) {
            if (sm.parser_error == error.PacketTooShort) { sm.egress_spec = 13; return; }
            if (!t_exact.apply().hit) { t_lpm.apply(); }
            t_acl.apply();
            return;
        }
        sm.egress_spec = 1;
        if (h.tag.kind == 1) {
            sm.mcast_grp = (bit<16>) h.tag.arg;
        } else if (h.tag.kind == 2) {
            m.mark = 0xC0FFEE;
            clone_preserving_field_list(CloneType.I2E, (bit<32>) h.tag.arg, 1);
        } else if (h.tag.kind == 3) {
            if (m.passes < 2) {
                m.passes = m.passes + 1;
                m.mark = 77;
                resubmit_preserving_field_list(1);
            } else {
                sm.egress_spec = (bit<9>) m.passes + 10;
                h.tag.arg = (bit<8>) m.mark;
            }
        } else if (h.tag.kind == 5) {
            truncate(20);
        } else if (h.tag.kind == 6) {
            digest<learn_t>(1, { h.eth.src, sm.ingress_port });
        } else if (h.tag.kind == 7) {
            regs.read(m.reg_val, 1);
            regs.write(1, m.reg_val + (bit<32>) h.tag.arg);
            h.udp.csum = m.reg_val[15:0];
        } else if (h.tag.kind == 8) {
            m0.execute_meter(0, m.color);
            h.tag.arg = m.color;
        } else if (h.tag.kind == 9) {
            hash(m.hash_out, HashAlgorithm.crc16, 16w100, { h.ipv4.src, h.ipv4.dst, h.tag.arg }, 32w1000);
            h.udp.csum = m.hash_out;
        } else if (h.tag.kind == 10) {
            t_ecmp.apply();
        } else if (h.tag.kind == 11) {
            t_const.apply();
        } else if (h.tag.kind == 12) {
            sm.egress_spec = 3;
            exit;
        } else if (h.tag.kind == 15) {
            sm.priority = 5;
        }
        if (h.tag.kind == 12) { sm.egress_spec = 4; }
    }
}

control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        h.eth.src[7:0] = (bit<8>) sm.instance_type;
        h.eth.src[23:8] = sm.egress_rid;
        h.eth.src[47:24] = (bit<24>) m.mark;
        if (h.tag.isValid()) {
            if (h.tag.kind == 4 && sm.instance_type == 0) {
                m.passes = 9;
                recirculate_preserving_field_list(1);
            } else if (h.tag.kind == 14 && sm.instance_type == 0) {
                m.mark = 0xBEEF;
                clone_preserving_field_list(CloneType.E2E, 5, 2);
            } else if (h.tag.kind == 16) {
                mark_to_drop(sm);
            } else if (h.tag.kind == 15) {
                h.tag.arg = (bit<8>) sm.enq_qdepth;
            }
        }
    }
}

control CC(inout headers_t h, inout meta_t m) {
    apply {
        update_checksum(h.ipv4.isValid(),
            { h.ipv4.version, h.ipv4.ihl, h.ipv4.diffserv, h.ipv4.total_len, h.ipv4.identification,
              h.ipv4.flags, h.ipv4.frag_offset, h.ipv4.ttl, h.ipv4.protocol, h.ipv4.src, h.ipv4.dst },
            h.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control D(packet_out pkt, in headers_t h) {
    apply { pkt.emit(h.eth); pkt.emit(h.ipv4); pkt.emit(h.udp); pkt.emit(h.tag); }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
