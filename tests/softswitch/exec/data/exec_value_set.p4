// Parser value sets (issue 16): a bit<16> set choosing an ethertype to parse, and a struct set
// with ternary/lpm/range/exact fields matched against four slices of the tag header.
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header tag_t { bit<8> kind; bit<8> prio; bit<16> vid; }
header mark_t { bit<8> v; }
struct headers_t { eth_t eth; tag_t tag; mark_t mark; }
struct meta_t { }

struct tag_key_t {
    @match(ternary) bit<8> kind;
    @match(lpm)     bit<8> prio;
    @match(range)   bit<16> vid;
    bit<4> low;
}

parser MyParser(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    value_set<bit<16>>(4) tag_types;
    @name("special_tags") value_set<tag_key_t>(8) specials;
    state start {
        pkt.extract(h.eth);
        transition select(h.eth.type) {
            0x0800: accept;          // a constant case before the set: it wins
            tag_types: parse_tag;
            default: accept;
        }
    }
    state parse_tag {
        pkt.extract(h.tag);
        transition select(h.tag.kind, h.tag.prio, h.tag.vid, h.tag.vid[3:0]) {
            specials: parse_mark;
            default: accept;
        }
    }
    state parse_mark { pkt.extract(h.mark); transition accept; }
}
control MyVerify(inout headers_t h, inout meta_t m) { apply { } }
control MyIngress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 2;
        if (h.tag.isValid()) { sm.egress_spec = 3; }
        if (h.mark.isValid()) { h.mark.v = h.mark.v + 1; sm.egress_spec = 4; }
    }
}
control MyEgress(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control MyCompute(inout headers_t h, inout meta_t m) { apply { } }
control MyDeparser(packet_out pkt, in headers_t h) {
    apply { pkt.emit(h.eth); pkt.emit(h.tag); pkt.emit(h.mark); }
}
V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
