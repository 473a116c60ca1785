"""Static per-switch intents: completeness, consistency with the topology, determinism."""
from __future__ import annotations

import ipaddress

from controller.plan import (
    CounterWatch,
    DropUnknownUsid,
    EcmpGroup,
    EvDirectMap,
    HostRoute,
    HostRouteGroup,
    OwnUsid,
    PortSetting,
    RouteUsid,
    Telemetry,
    build_plan,
    plan_to_data,
    thresholds,
)
from controller.topogen import clos, clos_data
from controller.topology import LinkProps, parse_topology


def test_spine_intents():
    plan = build_plan(clos(2, 2, 3, 2))
    sp = plan.switches["p2s1"]
    assert sp.of(OwnUsid) == [OwnUsid("fc00:0:1201::/48", 0x1201)]
    assert sp.of(OwnUsid)[0].block_usid == 0xFC0000001201
    assert sp.of(DropUnknownUsid) == [DropUnknownUsid("fc00::/32")]
    routes = {r.usid: r.next_hop for r in sp.of(RouteUsid)}
    assert set(routes) == {0x2201, 0x2202, 0x2203}  # every leaf of plane 2, nothing else
    topo = plan.topology
    for usid, nh in routes.items():
        leaf = next(n for n, u in plan.sids.switch_usid.items() if u == usid)
        assert topo.peer("p2s1", nh.port).node == leaf
        assert nh.neighbour_mac == plan.sids.switch_mac(leaf, topo.peer("p2s1", nh.port).port)
        assert nh.own_mac == plan.sids.switch_mac("p2s1", nh.port)
    assert not sp.of(EcmpGroup)
    hr = sp.of(HostRoute)
    assert len(hr) == len(topo.hosts) and not sp.of(HostRouteGroup)
    assert sp.of(Telemetry) == [Telemetry(0x1201)]


def test_leaf_intents():
    plan = build_plan(clos(2, 3, 2, 2))
    lf = plan.switches["p1l2"]
    usids = [r.usid for r in lf.of(RouteUsid)]
    assert usids == [0x1101, 0x1102, 0x1103, 0x8031, 0x8041]  # spines, then h3/h4 port 1
    host_route = lf.of(RouteUsid)[3]
    assert host_route.next_hop.neighbour == "h3:1"
    assert host_route.next_hop.neighbour_mac == plan.sids.host_mac("h3", 1)
    (grp,) = lf.of(EcmpGroup)
    assert [m.neighbour.split(":")[0] for m in grp.members] == ["p1s1", "p1s2", "p1s3"]
    (ev,) = lf.of(EvDirectMap)
    assert ev.group_id == grp.group_id and ev.members == ("p1s1", "p1s2", "p1s3")
    assert [ev.member_for(x) for x in (0, 1, 2, 3, 0x1FF)] == [0, 1, 2, 0, 0xFF % 3]
    rows = ev.ternary_entries()
    assert len(rows) == 256 and len({v for v, _, _ in rows}) == 256
    for fl in (0, 1, 2, 5, 0x1234, 0xFFFF):  # every flow label matches exactly one row, the same member
        ev32 = 0xC000 << 16 | fl
        hits = [m for v, mask, m in rows if ev32 & mask == v]
        assert hits == [ev.member_for(fl)]
    # a power-of-two member count: one row per member, the same member for every EV
    for spines in (1, 2, 4):
        (ev,) = build_plan(clos(2, spines, 2, 2)).switches["p1l2"].of(EvDirectMap)
        rows = ev.ternary_entries()
        assert len(rows) == spines and all(v & mask == v for v, mask, _ in rows)
        for fl in range(0, 0x20000, 37):
            assert [m for v, mask, m in rows if (0xC000 << 16 | fl) & mask == v] == [ev.member_for(fl)]
    local = {r.host for r in lf.of(HostRoute)}
    remote = {r.host for r in lf.of(HostRouteGroup)}
    assert local == {"h3", "h4"} and remote == {"h1", "h2"}
    ports = lf.of(PortSetting)
    assert [p.port for p in ports] == [1, 2, 3, 4, 5]
    assert [p.kind for p in ports] == ["fabric"] * 3 + ["host"] * 2
    assert all(p.admin_up for p in ports)
    kinds = [c.kind for c in lf.of(CounterWatch)]
    assert {"port_rx", "port_tx", "drop", "trim", "ecn_mark"} <= set(kinds)


def test_every_prefix_is_valid_and_unique_per_switch():
    plan = build_plan(clos(4, 4, 4, 2))
    for sp in plan.switches.values():
        prefixes = [r.prefix for r in sp.of(RouteUsid)] + [o.prefix for o in sp.of(OwnUsid)]
        assert len(prefixes) == len(set(prefixes)), sp.name
        for p in prefixes:
            net = ipaddress.IPv6Network(p)
            assert net.prefixlen == 48 and net.subnet_of(plan.sids.block)
        assert sp.of(OwnUsid)[0].usid == sp.usid == sp.switch_id


def test_thresholds_follow_queue_depth():
    assert thresholds(LinkProps()) == (16, 56, 64)
    assert thresholds(LinkProps(queue_depth=200)) == (50, 175, 200)
    d = clos_data(1, 1, 1, 1)
    d["link_defaults"] = {"queue_depth": 8}
    plan = build_plan(parse_topology(d))
    assert {(p.ecn_threshold, p.trim_threshold, p.drop_threshold)
            for p in plan.switches["p1l1"].of(PortSetting)} == {(2, 7, 8)}


def test_plan_deterministic():
    a = plan_to_data(build_plan(clos(2, 2, 2, 2)))
    b = plan_to_data(build_plan(clos(2, 2, 2, 2)))
    assert a == b
    assert a["p1l1"]["intents"][0]["type"] == "PortSetting"


def test_routes_share_next_hops_and_gid_strings():
    """A switch holds a GID host route per host (half a million intents at 1,024 hosts): the routes out
    of one port share its (frozen) next hop and every switch shares each host's GID string, and the plan
    is the one each switch's plan would be on its own."""
    from controller.plan import HostRoute, HostRouteGroup, _switch_plan, build_sid_plan

    topo = clos(2, 4, 3, 4)
    plan = build_plan(topo)
    sids = build_sid_plan(topo)
    seen_gids: dict[str, str] = {}
    for name, sp in plan.switches.items():
        assert sp == _switch_plan(topo, sids, name)  # gids computed per switch, next hops per route
        hops: dict[int, object] = {}
        for r in sp.of(HostRoute):
            assert hops.setdefault(r.next_hop.port, r.next_hop) is r.next_hop
        for r in (*sp.of(HostRoute), *sp.of(HostRouteGroup)):
            assert seen_gids.setdefault(r.host, r.prefix) is r.prefix
    assert len(seen_gids) == len(topo.hosts)
