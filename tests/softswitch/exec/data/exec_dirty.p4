/* Headers reset for the next packet only while valid or marked dirty (softswitch.exec.usage
 * field_written_headers): every way a header can be left invalid with non-zero fields, each
 * done by packets from source MAC ...01; packets with ether type 0x9001 extract everything.
 * `rep` reports what is read of each header; with fresh objects every field of an invalid,
 * untouched header reads 0.
 * g: slice of a field stored while invalid;  p: field stored in the parser while invalid;
 * q: out argument (a field) of an action;  k: setInvalid after extract, in egress;
 * w: assigned a struct-like initializer then setInvalid;  z: assigned a dirty invalid header;
 * st: element field stored while invalid, element setInvalid;
 * ps: push_front / pop_front, element assigned whole;
 * v, u: stored inside `if (isValid())` (no mark written there) after setInvalid / after an
 * assignment from an invalid header. */
#include <core.p4>
#include <v1model.p4>

header eth_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
header one_t { bit<8> x; bit<8> y; }
header rep_t { bit<8> g; bit<8> p; bit<8> q; bit<8> k; bit<8> w; bit<8> z; bit<8> s0; bit<8> s1;
               bit<8> p0; bit<8> p1; bit<8> p2; bit<8> v; bit<8> u; }

struct headers_t {
    eth_t eth; one_t g; one_t p; one_t q; one_t k; one_t w; one_t z; one_t[2] st; one_t[3] ps;
    one_t v; one_t u; one_t never; rep_t rep;
}
struct meta_t { bit<8> unused; }

parser P(packet_in pkt, out headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.eth);
        transition select(h.eth.ether_type) { 0x9001: all; default: check; }
    }
    state check {
        transition select(h.eth.src) { 1: write_p; default: accept; }
    }
    state write_p {
        h.p.y = 0x44;
        transition accept;
    }
    state all {
        pkt.extract(h.g); pkt.extract(h.p); pkt.extract(h.q); pkt.extract(h.k); pkt.extract(h.w);
        pkt.extract(h.z); pkt.extract(h.st.next); pkt.extract(h.st.next); pkt.extract(h.ps.next);
        pkt.extract(h.v); pkt.extract(h.u);
        transition accept;
    }
}

control VC(inout headers_t h, inout meta_t m) { apply { } }

control I(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    action give(out bit<8> v) { v = 0x33; }
    apply {
        sm.egress_spec = 1;
        if (h.eth.src == 1) {
            if (!h.g.isValid()) { h.g.y[3:0] = 0xa; }
            give(h.q.y);
            h.w = { 0x11, 0x22 };
            h.w.setInvalid();
            h.z = h.g;
            h.st[1].y = 0x55;
            h.st[0].setInvalid();
            h.ps.push_front(1);
            h.ps[0] = { 0x66, 0x77 };
            h.ps[0].setInvalid();
            h.ps.pop_front(1);
        }
    }
}

control E(inout headers_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        if (h.eth.src == 1) { h.k.setInvalid(); }
        if (h.eth.src == 1 && h.v.isValid()) { h.v.setInvalid(); h.v.y = h.v.y + 1; }
        if (h.u.isValid() && h.eth.src == 1) { h.u = h.never; h.u.y = 0x5a; }
        h.rep.setValid();
        h.rep.g = h.g.y;
        h.rep.p = h.p.y;
        h.rep.q = h.q.y;
        h.rep.k = h.k.y;
        h.rep.w = h.w.y;
        h.rep.z = h.z.y;
        h.rep.s0 = h.st[0].y;
        h.rep.s1 = h.st[1].y;
        h.rep.p0 = h.ps[0].y;
        h.rep.p1 = h.ps[1].y;
        h.rep.p2 = h.ps[2].y;
        h.rep.v = h.v.y;
        h.rep.u = h.u.y;
    }
}
control CC(inout headers_t h, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t h) { apply { pkt.emit(h.eth); pkt.emit(h.rep); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
