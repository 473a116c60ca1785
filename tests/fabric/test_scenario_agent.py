"""The scenario agent binds its QPs to mrc_ctl profiles made from the EV plan (one path from plan to wire).

Pure logic: the controller writes real plan files for a small Clos; the agent's ``peer_profile`` loads
them into a sans-IO endpoint's ``MrcCtlContext``; the frames a bound QP sends are compared byte for
byte with those of a QP given the plan's EV list directly (what the agent did before).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from mrc.core import Endpoint, NsccConfig, QpAttr
from mrc.endpoint import load_plan
from mrc.wire import formats as F
from mrc.wire.codec import encode_data
from mrc_fabric.scenarios.agent import peer_profile


@pytest.fixture(scope="module")
def fabric_plan():
    from controller.plan import build_plan
    from controller.topogen import clos

    return build_plan(clos(2, 2, 2, 1))


@pytest.fixture(scope="module")
def plans(tmp_path_factory, fabric_plan):
    from controller.evplan import write_ev_files

    files = write_ev_files(fabric_plan, tmp_path_factory.mktemp("plans"))
    return [load_plan(p) for p in files]


def _frames(qp) -> list[bytes]:
    """One data frame per EV slot of ``qp`` (connected), as the requester would encode it."""
    return [encode_data(e.encap, F.OP_WRITE_ONLY, qp.remote.qpn, 7, 0x1000, 0x55, 64, bytes(64))
            for e in qp.evset.entries]


@pytest.mark.parametrize("encap", ["srv6", "stev", "udp"])
@pytest.mark.parametrize(("mode", "pin"), [("mrc", 0), ("rc", 3)])
def test_agent_qps_bind_to_a_ctl_profile_that_puts_the_plans_evs_on_the_wire(plans, encap, mode, pin):
    hp = plans[0]
    (peer,) = hp.peers
    pp = hp.peers[peer]
    ep = Endpoint(hp.gid, sorted(hp.ports), encap=encap)
    pid = peer_profile(ep.ctl, hp, peer, encap, mode, pin, ep.ports)
    prof = ep.ctl.ev_profile(pid)
    assert prof.ev_min_active == min(pp.profiles[encap].ev_min_active, len(prof.evs))  # the plan's floor

    bound = [ep.create_qp(attr=QpAttr(mode=mode, ev_profile_id=pid)) for _ in range(2)]
    evs = hp.evs_to(pp, encap)
    if mode == "rc":  # the agent's RC flows used to rotate the list so the pinned EV comes first
        evs = evs[pin % len(evs):] + evs[: pin % len(evs)]
    private = ep.create_qp(evs, QpAttr(mode=mode))
    for qp in [*bound, private]:
        ep.connect(qp, 0x300, pp.gid, 0, 0)
    assert all(qp.evset.prof is prof for qp in bound)  # shared states, floor and events
    assert private.evset.prof is not prof
    want = _frames(private)
    assert _frames(bound[0]) == _frames(bound[1]) == want  # same headers, byte for byte
    if mode == "rc":
        assert bound[0].evset.entries[0].port == evs[0][1]


def test_each_call_makes_a_fresh_profile_and_a_missing_encap_is_a_plan_error(plans):
    from mrc.endpoint import PlanError

    hp = plans[0]
    (peer,) = hp.peers
    ep = Endpoint(hp.gid, sorted(hp.ports), encap="srv6")
    a = peer_profile(ep.ctl, hp, peer, "srv6", "mrc", 0, ep.ports)
    b = peer_profile(ep.ctl, hp, peer, "srv6", "mrc", 0, ep.ports)
    assert a != b
    with pytest.raises(KeyError):
        peer_profile(ep.ctl, hp, "no-such-host", "srv6", "mrc", 0, ep.ports)
    bare = replace(hp, peers={peer: replace(hp.peers[peer], evs={}, profiles={})})
    with pytest.raises(PlanError, match="no srv6 EVs"):
        peer_profile(ep.ctl, bare, peer, "srv6", "mrc", 0, ep.ports)


@pytest.mark.parametrize(("mode", "cc", "nscc"), [("mrc", "", {}), ("mrc", "nscc", {"base_rtt": 40_000}),
                                                   ("rc", "none", {}), ("rc", "", {}), ("mrc", "auto", {}),
                                                   ("rc", "auto", {})])
def test_agent_qps_bind_the_runs_cc_profile_and_a_runtime_change_reaches_them_all(plans, mode, cc, nscc):
    """The agent's ``cc_binding`` + ``peer_profile``, as ``run`` builds each QP's attributes: NSCC and
    none are one ctl CC profile every QP binds to by id; RC's default DCQCN stays a name."""
    from mrc.ctl import CC_ALGO_NSCC, CcProfileAttr, CcProfileAttrMask
    from mrc_fabric.scenarios.agent import cc_binding

    hp = plans[0]
    (peer,) = hp.peers
    ep = Endpoint(hp.gid, sorted(hp.ports), encap="srv6")
    name, cc_pid = cc_binding(ep, {"cc": cc, "nscc": nscc}, mode, 4096)
    ev_pid = peer_profile(ep.ctl, hp, peer, "srv6", mode, 1, ep.ports)
    qps = [ep.create_qp(attr=QpAttr(mode=mode, cc=name, ev_profile_id=ev_pid, cc_profile_id=cc_pid)) for _ in range(3)]
    if mode == "rc" and cc in ("", "auto"):
        assert cc_pid is None and all(q.attr.cc == "dcqcn" and q.cc_profile is None for q in qps)
        return
    assert cc_pid is not None and all(q.attr.cc_profile_id == cc_pid for q in qps)
    prof = ep.ctl.cc_profile(cc_pid)
    assert all(q.cc_profile is prof for q in qps)
    assert prof.algorithm == (None if cc == "none" else CC_ALGO_NSCC)
    if nscc:
        assert prof.cc_config.base_rtt == 40_000
    for i, qp in enumerate(qps):
        ep.connect(qp, 0x300 + i, hp.peers[peer].gid, 0, 0)
        qp.post_write(1, bytes(32 << 10), 0x1000, 0x55)
    ep.datagrams_to_send(0)
    if cc == "none":  # algorithm None: no window (ONLINE allows CONFIG only, so it stays so)
        assert all(q.cc.window() is None and q.attr.cc is None for q in qps)
        return
    new = NsccConfig.for_network(25_000, 10, 4096, max_cwnd=20_000)
    ep.ctl.modify_cc_profile(cc_pid, CcProfileAttr(cc_config=new), CcProfileAttrMask.CONFIG)
    assert ep.datagrams_to_send(10_000_000)  # each QP's next data packet takes the profile's config first
    assert all(q.attr.cc == new and q.cc.cfg == new and q.cc.cwnd <= 20_000 for q in qps)


@pytest.mark.parametrize(("mode", "pin"), [("mrc", 0), ("rc", 3)])
def test_an_ev_events_route_is_the_path_the_controllers_tables_forward_it_on(plans, fabric_plan, mode, pin):
    """The 8th field of the agent's EV events names, per slot of the profile its QPs bind to, the path the
    EV takes: the runner's ``ev_path`` of it equals the switches the controller's own uN/uSID tables walk
    the slot's carrier through (so the report can tell a retired EV on a failed link from a healthy one)."""
    from controller.evplan import walk_srv6
    from mrc_fabric.scenarios.agent import ev_route
    from mrc_fabric.scenarios.runner import ev_path

    hp = plans[0]
    (peer,) = hp.peers
    ep = Endpoint(hp.gid, sorted(hp.ports), encap="srv6")
    prof = ep.ctl.ev_profile(peer_profile(ep.ctl, hp, peer, "srv6", mode, pin, ep.ports))
    routes = ev_route(hp, peer, "srv6", mode, pin)
    assert len(routes) == len(prof.evs) == 4
    for (carrier, port), route in zip(_rotated(hp.evs_to(hp.peers[peer], "srv6"), mode, pin), routes, strict=True):
        assert route[:2] == [peer, port] and route[3] == "srv6"
        reached, _, hops = walk_srv6(fabric_plan, hp.host, port, carrier)
        assert reached == peer
        assert ev_path(fabric_plan.topology, hp.host, route) == [hp.host, *(h.switch for h in hops), peer]
    assert ev_path(fabric_plan.topology, hp.host, None) is None
    assert ev_path(fabric_plan.topology, hp.host, [peer, 1, None, "srv6"]) is None  # a plan that names no spine
    assert ev_path(fabric_plan.topology, hp.host, [peer, 1, "p1s1", "udp"]) is None  # the leaf hashes UDP EVs
    # not a path of this fabric (unknown peer, uncabled NIC port): no path, counted as unknown_path
    assert ev_path(fabric_plan.topology, hp.host, ["h999", 1, "p1s1", "srv6"]) is None
    assert ev_path(fabric_plan.topology, hp.host, [peer, 99, "p1s1", "srv6"]) is None


def test_ev_nodes_follow_the_tables_also_for_two_hosts_of_one_leaf():
    """SRv6 carriers turn at the spine even between two hosts of one leaf; STEV's GID host route
    delivers them at the leaf: ``ev_nodes`` says so, as the controller's tables walk them."""
    import ipaddress

    from controller.evplan import ev_nodes, srv6_profile, stev_profile, walk_srv6, walk_stev
    from controller.plan import build_plan
    from controller.topogen import clos

    plan = build_plan(clos(2, 2, 2, 2))
    topo = plan.topology
    for a, b in (("h1", "h2"), ("h1", "h3")):
        gid = str(ipaddress.IPv6Address(plan.sids.host_gid(b).packed))
        for ev in srv6_profile(plan, a, b).evs:
            hops = walk_srv6(plan, a, ev.port, ev.value)[2]
            assert ev_nodes(topo, a, b, ev.port, ev.spine, "srv6") == [a, *(h.switch for h in hops), b]
        for ev in stev_profile(plan, a, b).evs:
            hops = walk_stev(plan, a, ev.port, gid, ev.flow_label)[2]
            assert ev_nodes(topo, a, b, ev.port, ev.spine, "stev") == [a, *(h.switch for h in hops), b]
            assert ev_nodes(topo, a, b, ev.port, ev.spine, "stev", ev_direct=False) is None


def _rotated(evs, mode, pin):
    k = pin % len(evs) if mode == "rc" else 0
    return evs[k:] + evs[:k]
