"""SID plan: uniqueness, determinism, documented allocation, address formats."""
from __future__ import annotations

import ipaddress
import random

import pytest

from controller.sidplan import build_sid_plan
from controller.topogen import clos, clos_data
from controller.topology import TopologyError, parse_topology


def test_allocation_scheme():
    s = build_sid_plan(clos(2, 2, 2, 2))
    assert s.switch_usid["p1s2"] == 0x1102
    assert s.switch_usid["p2l1"] == 0x2201
    assert s.host_port_usid[("h3", 2)] == 0x8032
    assert str(s.usid_prefix(0x2101)) == "fc00:0:2101::/48"
    assert str(s.host_port_address("h1", 1)) == "fc00:0:8011::"
    assert str(s.host_gid("h4")) == "fd00:4d52:4300::4"
    assert str(s.carrier(0x2101, 0x1101, 0x2102, 0x8041)) == "fc00:0:2101:1101:2102:8041::"
    assert s.switch_id("p1l1") == 0x2101
    assert s.switch_mac("p1l1", 3) == "02:00:21:01:00:03"
    assert s.host_mac("h1", 2) == "02:01:80:12:00:02"


def test_unique_everything_large():
    t = clos(4, 4, 4, 2)
    s = build_sid_plan(t)
    usids = list(s.switch_usid.values()) + list(s.host_port_usid.values())
    assert len(usids) == len(set(usids)) == len(t.switches) + len(t.hosts) * t.planes
    assert all(0 < u <= 0xFFFF for u in usids)
    macs = [s.switch_mac(sw, p) for sw in t.switches for p in t.ports_of(sw)]
    macs += [s.host_mac(h, p) for (h, p) in s.host_port_usid]
    assert len(macs) == len(set(macs))
    for m in macs:  # locally administered unicast
        first = int(m.split(":")[0], 16)
        assert first & 0x02 and not first & 0x01
    gids = {s.host_gid(h) for h in t.hosts}
    assert len(gids) == len(t.hosts)
    assert all(g in s.gid_prefix and g not in s.block for g in gids)


def test_deterministic_and_order_independent():
    data = clos_data(3, 3, 3, 2)
    a = build_sid_plan(parse_topology(data)).to_data()
    assert build_sid_plan(parse_topology(data)).to_data() == a
    shuffled = dict(data)
    rng = random.Random(7)
    for key in ("switches", "hosts", "links"):
        shuffled[key] = list(data[key])
        rng.shuffle(shuffled[key])
    assert build_sid_plan(parse_topology(shuffled)).to_data() == a


def test_custom_block_and_errors():
    t = clos(1, 1, 1, 1)
    s = build_sid_plan(t, block="2001:db8::/32")
    assert str(s.carrier(0x2101)) == "2001:db8:2101::"
    with pytest.raises(TopologyError, match="locator block.*/32"):
        build_sid_plan(t, block="fc00::/48")
    with pytest.raises(TopologyError, match="not an IPv6 prefix"):
        build_sid_plan(t, block="nonsense")
    with pytest.raises(TopologyError, match="overlaps"):
        build_sid_plan(t, block="fd00::/32", gid_prefix="fd00:0:0:1::/64")
    with pytest.raises(ValueError):
        s.carrier(*([1] * 7))


def test_pinned_usid_and_collision():
    d = clos_data(1, 2, 1, 1)
    d["switches"][0]["usid"] = 0x0ABC
    s = build_sid_plan(parse_topology(d))
    assert s.switch_usid["p1s1"] == 0x0ABC
    d["switches"][0]["usid"] = 0x1102  # the automatic uSID of p1s2
    with pytest.raises(TopologyError, match="switch p1s2: uSID 1102 already allocated to switch p1s1"):
        build_sid_plan(parse_topology(d))


def test_prefix_is_ipv6_network():
    s = build_sid_plan(clos(1, 1, 1, 1))
    assert s.usid_prefix(0x1101) == ipaddress.IPv6Network("fc00:0:1101::/48")
