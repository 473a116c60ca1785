"""The benchmark program forwards correctly: uSID shift, LPM route with direct counter, TTL, ACL."""
from __future__ import annotations

import pytest
from exec_rig import DATA, Rig
from scapy.layers.inet import UDP
from scapy.layers.inet6 import IPv6, IPv6ExtHdrSegmentRouting
from scapy.layers.l2 import Ether

MAC = "00:aa:bb:cc:dd:ee"


@pytest.fixture
def rig():
    r = Rig(DATA / "bench4.p4")
    r.entry("I.my_mac", {"h.eth.dst": ("exact", 0x00AABBCCDDEE)}, r.action("I.nop"))
    r.entry("I.usid_un", {"h.ipv6.dst": ("lpm", 0xFC000001_0002 << 80, 48)}, r.action("I.usid_shift"))
    r.entry("I.route_v6", {"h.ipv6.dst": ("lpm", 0xFC000001_0003 << 80, 48)},
            r.action("I.fwd", port=4, dmac=0x020000000009))
    r.entry("I.acl", {"h.ipv6.next_hdr": ("ternary", 17, 0xFF), "h.udp.dport": ("ternary", 9, 0xFFFF)},
            r.action("I.drop"), priority=1)
    return r


def frame(dport=4791, srh=True):
    ip = IPv6(src="2001:db8::1", dst="fc00:1:2:3:4::", hlim=64)
    p = Ether(dst=MAC, src="02:00:00:00:00:01") / ip
    if srh:
        p = p / IPv6ExtHdrSegmentRouting(addresses=["fc00:1:2:3:4::", "fc00:9::"], segleft=1, lastentry=1)
    return bytes(p / UDP(sport=1, dport=dport) / b"data")


@pytest.mark.parametrize("srh", [True, False])
def test_usid_shift_route_and_hop_limit(rig, srh):
    data = frame(srh=srh)
    res = rig.pipeline.ingress(data, 1, 0)
    assert [it.egress_port for it in res.to_tm] == [4]
    if srh:
        assert res.to_tm[0].meta.H.f_segs.nxt == 2
    out = rig.pipeline.egress(res.to_tm[0], 1).frames[0].data
    p = Ether(out)
    assert p.dst == "02:00:00:00:00:09"
    assert p[IPv6].dst == "fc00:1:3:4::"
    assert p[IPv6].hlim == 63
    assert len(out) == len(data)
    assert out[-4:] == b"data"
    counter = rig.state.table("I.route_v6").entries()[0].counter
    assert counter == [len(data), 1]


def test_acl_drop_and_route_miss(rig):
    assert rig.pipeline.ingress(frame(dport=9, srh=False), 1, 0).dropped
    assert not rig.pipeline.ingress(frame(dport=9), 1, 0).dropped  # next_hdr is 43 with an SRH
    # my_mac's drop() is overridden by route_v6's fwd: the program applies every table in order
    other = bytearray(frame())
    other[0] = 0x02
    assert not rig.pipeline.ingress(bytes(other), 1, 0).dropped
    miss = bytes(Ether(dst=MAC) / IPv6(dst="fc00:1:7::") / UDP(dport=1))
    res = rig.pipeline.ingress(miss, 1, 0)
    assert res.dropped and not res.to_tm  # route_v6 default drop_route()
