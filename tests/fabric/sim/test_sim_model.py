"""The simulated switches forward as the controller's plan says: every EV's path against the plan walkers."""
from __future__ import annotations

import ipaddress

import pytest

from controller import build_plan
from controller.evplan import srv6_profile, stev_profile, walk_srv6, walk_stev
from controller.topogen import clos
from mrc.wire import formats as F
from mrc.wire.codec import Encap, ProbeInfo, encode_data, encode_probe
from mrc_fabric.sim.model import SimFabric


def _fabric(stev_mode: str = "ev_direct") -> tuple[SimFabric, object]:
    plan = build_plan(clos(2, 3, 2, 2))
    return SimFabric(plan, link_gbps=100, nic_gbps=100, delay_ns=1000, queue_packets=0, stev_mode=stev_mode), plan


def _frame(plan, src: str, dst: str, ev, encap: str) -> bytes:
    sids = plan.sids
    enc = Encap(encap, sids.host_gid(src).packed, sids.host_gid(dst).packed, ev)
    return encode_data(enc, F.OP_WRITE_ONLY, 0x100, 1, 0x1000, 0x10, 64, bytes(64))


def test_srv6_paths_follow_the_uSID_plan_for_every_pair_and_ev():
    fab, plan = _fabric()
    hosts = fab.hosts
    checked = 0
    for src in hosts:
        for dst in hosts:
            if src == dst:
                continue
            for ev in srv6_profile(plan, src, dst).evs:
                r = fab.route(src, ev.port, _frame(plan, src, dst, ev.value, "srv6"), "srv6")
                host, port, hops = walk_srv6(plan, src, ev.port, ev.value)
                assert not r.drop
                assert (fab.hosts[r.dst_host], r.dst_port) == (host, port)
                assert [p.name for p in r.ports[1:]] == [f"{h.switch}:{h.out_port}" for h in hops]
                assert r.ports[2].owner == ev.spine  # the spine the controller named
                checked += 1
    assert checked == 4 * 3 * 6


def test_stev_ev_direct_picks_the_planned_spine():
    fab, plan = _fabric()
    for src, dst in (("h1", "h4"), ("h2", "h3"), ("h1", "h2")):
        for ev in stev_profile(plan, src, dst).evs:
            data = _frame(plan, src, dst, int.from_bytes(ev.value, "big"), "stev")
            r = fab.route(src, ev.port, data, "stev")
            _, _, hops = walk_stev(plan, src, ev.port, str(plan.sids.host_gid(dst)), ev.flow_label)
            assert [p.name for p in r.ports[1:]] == [f"{h.switch}:{h.out_port}" for h in hops]
            if (src, dst) != ("h1", "h2"):  # same leaf: the leaf's host route, no spine
                assert r.ports[1].peer == ev.spine


def test_ecmp_hash_is_static_per_flow_and_spreads():
    fab, plan = _fabric("ecmp")
    spines = set()
    for ev in stev_profile(plan, "h1", "h4", 8).evs:
        data = _frame(plan, "h1", "h4", int.from_bytes(ev.value, "big"), "stev")
        a = fab.route("h1", ev.port, data, "stev")
        fab.invalidate()
        assert fab.route("h1", ev.port, data, "stev").ports == a.ports
        spines.add(a.ports[1].peer)
    assert len(spines) > 1


def test_unknown_usid_and_carrier_ending_at_a_switch_are_dropped_with_their_reason():
    fab, plan = _fabric()
    sids = plan.sids
    bad = sids.carrier(sids.switch_usid["p1l1"], 0x1FFF).packed  # our block, a uSID nobody routes
    r = fab.route("h1", 1, _frame(plan, "h1", "h4", bad, "srv6"), "srv6")
    assert (r.drop, r.drop_at) == ("usid_unknown", "p1l1")
    ends = sids.carrier(sids.switch_usid["p1l1"], sids.switch_usid["p1s1"]).packed
    r = fab.route("h1", 1, _frame(plan, "h1", "h4", ends, "srv6"), "srv6")
    assert (r.drop, r.drop_at) == ("local_not_probe", "p1s1")
    other = ipaddress.IPv6Address("2001:db8::1").packed
    r = fab.route("h1", 1, _frame(plan, "h1", "h4", other, "srv6"), "srv6")
    assert (r.drop, r.drop_at) == ("no_route", "p1l1")


def test_ports_carry_the_programs_thresholds():
    fab, _ = _fabric()
    p = fab.ports[("p1l1", 1)]
    assert (p.ecn_thr, p.trim_thr, p.drop_thr) == (16, 56, 64)  # controller.plan.thresholds of depth 64
    assert fab.ports[("h1", 1)].sw is None  # a host NIC: no switch program
    assert [q.name for q in fab.link_ports("p1l1", "p1s2")] == ["p1l1:2", "p1s2:1"]


def test_priority_frames_go_first_and_take_their_bytes_from_the_shared_link():
    """The strict-priority queue (trimmed headers, ACKs, CNPs, probes) shares the port's line rate with
    the data queue, as softswitch's byte-rate links and a real port do: a control frame overtakes a
    data backlog, and the data frame that starts after it waits its bytes' time."""
    from mrc_fabric.sim.engine import SimRun

    fab, _ = _fabric()
    p = fab.ports[("p1l1", 2)]
    per = p.ns_per_byte
    p.free = 1000.0  # a data backlog until t = 1000 ns
    arrive = SimRun._prio_tx(p, 100, 0)
    assert arrive == 100 * per + p.delay_ns  # ahead of the backlog, not behind it
    assert p.free == 1000.0 + 100 * per  # the next data frame starts that much later
    second = SimRun._prio_tx(p, 100, 0)  # behind the first priority frame
    assert second == 200 * per + p.delay_ns
    p.free = p.pfree = 0.0  # idle port: the control frame holds the link for its own time
    SimRun._prio_tx(p, 64, 5000)
    assert p.free == 5000 + 64 * per
def test_the_top_queue_goes_ahead_of_the_resend_queue():
    """congestion.p4's two queues above data: trimmed headers and control packets (priority 0) overtake a backlog
    of resent data (1), which in turn overtakes the data queue; every frame takes its bytes from the one
    link.  One queue for both (as the model had it) put a probe behind every full-size resend."""
    from mrc.wire.formats import RESEND_PRIORITY as RESEND
    from mrc.wire.formats import TRIM_PRIORITY as TOP
    from mrc_fabric.sim.engine import SimRun

    fab, _ = _fabric()
    p = fab.ports[("p1l1", 2)]
    per, d = p.ns_per_byte, p.delay_ns
    for _ in range(3):  # three 4 KiB resends at t = 0
        SimRun._prio_tx(p, 4096, 0, RESEND)
    assert p.rfree == pytest.approx(3 * 4096 * per) and p.pfree == 0.0
    assert SimRun._prio_tx(p, 100, 0, TOP) == pytest.approx(100 * per + d)  # a probe: ahead of the resends
    assert p.rfree == pytest.approx((3 * 4096 + 100) * per)  # a resend queued now waits for it as well
    assert SimRun._prio_tx(p, 4096, 0, RESEND) == pytest.approx((4 * 4096 + 100) * per + d)
    assert p.free == pytest.approx((4 * 4096 + 100) * per)  # and the data queue for all of them
    # bounded (sim.priority_queue_factor): each queue has its own room and its own tail-drop count
    p.pcap, p.rcap = 1, 1
    p.pdeps.clear()
    p.rdeps.clear()
    now = 10_000_000
    assert SimRun._prio_tx(p, 4096, now, RESEND) is not None and SimRun._prio_tx(p, 4096, now, RESEND) is None
    assert SimRun._prio_tx(p, 100, now, TOP) is not None and SimRun._prio_tx(p, 100, now, TOP) is None
    assert (p.ptail, p.rtail) == (1, 1)




@pytest.mark.parametrize("encap, mode", [("stev", "ecmp"), ("udp", "ev_direct")])  # UDP hashes in either mode
def test_ecmp_hash_is_the_flow_not_the_traffic_class(encap, mode):
    """mrc_switch.p4's ecmp_selector hashes addresses, protocol, UDP ports and the 20-bit flow label:
    a probe (Not-ECT) and a resend (DSCP 34) of an EV are its data's flow and take its uplink. The
    simulator hashed the IPv6 header's bytes 15-17, whose first nibble is the low DSCP bits and the
    ECN field: with 3 spines 10 of 16 EVs' probes crossed another spine than their data."""
    fab, plan = _fabric(mode)
    sids = plan.sids
    for ev in stev_profile(plan, "h1", "h4", 8).evs:
        value = int.from_bytes(ev.value, "big") if encap == "stev" else ev.udp_sport
        enc = Encap(encap, sids.host_gid("h1").packed, sids.host_gid("h4").packed, value)
        data = encode_data(enc, F.OP_WRITE_ONLY, 0x100, 1, 0x1000, 0x10, 64, bytes(64))
        frames = (encode_probe(enc, F.OP_PROBE_REQ, ProbeInfo(req_id=1, port=ev.port)),
                  encode_data(enc, F.OP_WRITE_ONLY, 0x100, 1, 0x1000, 0x10, 64, bytes(64), dscp=F.DSCP_RESEND),
                  encode_data(enc, F.OP_WRITE_ONLY, 0x100, 1, 0x1000, 0x10, 64, bytes(64), ecn=F.ECN_CE))
        spine = fab.route("h1", ev.port, data, encap).ports[1].peer
        assert [fab.route("h1", ev.port, fr, encap).ports[1].peer for fr in frames] == [spine] * 3


def test_gid_host_routes_are_read_at_a_switchs_first_stev_frame():
    """Every switch has a GID host route per host (half a million at 1,024 hosts): SRv6 runs never read
    them, so the model builds a switch's table at its first STEV/UDP frame -- the plan's routes, whole."""
    from controller.plan import HostRoute, HostRouteGroup

    fab, plan = _fabric()
    for ev in srv6_profile(plan, "h1", "h4").evs:
        fab.route("h1", ev.port, _frame(plan, "h1", "h4", ev.value, "srv6"), "srv6")
    assert fab.gid_routes == {}
    ev = stev_profile(plan, "h1", "h4").evs[0]
    r = fab.route("h1", ev.port, _frame(plan, "h1", "h4", int.from_bytes(ev.value, "big"), "stev"), "stev")
    assert set(fab.gid_routes) == {p.owner for p in r.ports[1:]}
    for n, table in fab.gid_routes.items():
        sp = plan.switches[n]
        want = {ipaddress.IPv6Network(x.prefix).network_address.packed for x in (*sp.of(HostRoute), *sp.of(HostRouteGroup))}
        assert set(table) == want and len(want) == len(fab.hosts)
    leaf = fab.gid_routes[r.ports[1].owner]
    assert leaf[plan.sids.host_gid("h2").packed].peer == "h2"  # a local host: its port
    assert isinstance(leaf[plan.sids.host_gid("h4").packed], tuple)  # a remote host: the uplink group
