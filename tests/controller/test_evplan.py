"""EV plans: every EV's path exists (walked hop by hop through the plan), uniqueness, determinism."""
from __future__ import annotations

import ipaddress
import json

import pytest
import yaml

from controller.evplan import (
    EvPlanError,
    host_ev_data,
    profile_to_data,
    srv6_profile,
    stev_profile,
    walk_srv6,
    walk_stev,
    write_ev_files,
)
from controller.plan import RouteUsid, build_plan
from controller.topogen import clos


@pytest.fixture(scope="module")
def plan():
    return build_plan(clos(3, 3, 2, 2))


def _pairs(plan):
    hosts = [h.name for h in plan.topology.host_list()]
    return [(a, b) for a in hosts for b in hosts if a != b]


def test_srv6_every_ev_walks_to_destination(plan):
    topo = plan.topology
    for src, dst in _pairs(plan):
        prof = srv6_profile(plan, src, dst, evs_per_path=2)
        assert prof.ev_count == topo.planes * 3 * 2
        seen_paths = set()
        for ev in prof.evs:
            host, port, hops = walk_srv6(plan, src, ev.port, ev.value)
            assert (host, port) == (dst, ev.port)
            assert len(hops) == 3
            assert hops[1].switch == ev.spine
            assert {h.switch for h in hops} <= {s.name for s in topo.switches.values() if s.plane == ev.plane}
            seen_paths.add((ev.port, ev.spine))
        assert len(seen_paths) == topo.planes * 3  # every plane x spine covered
        assert len({(e.value, e.port, e.udp_sport) for e in prof.evs}) == prof.ev_count
        assert len({e.udp_sport for e in prof.evs}) == prof.ev_count


def test_srv6_carrier_layout(plan):
    ev = srv6_profile(plan, "h1", "h4").evs[0]
    assert len(ev.value) == 16
    assert ipaddress.IPv6Address(ev.value) == ipaddress.IPv6Address("fc00:0:2101:1101:2102:8041::")
    # consecutive EVs alternate planes
    assert [e.port for e in srv6_profile(plan, "h1", "h4").evs[:3]] == [1, 2, 3]


def test_stev_every_ev_walks_to_destination(plan):
    for src, dst in _pairs(plan):
        prof = stev_profile(plan, src, dst, evs_per_path=2)
        gid = str(plan.sids.host_gid(dst))
        spines_hit = set()
        for ev in prof.evs:
            value = int.from_bytes(ev.value, "big")
            assert value >> 16 == ev.udp_sport and value & 0xFFFF == ev.flow_label
            host, port, hops = walk_stev(plan, src, ev.port, gid, ev.flow_label)
            assert (host, port) == (dst, ev.port)
            if plan.topology.host_leaf(src, 1)[0] == plan.topology.host_leaf(dst, 1)[0]:
                assert len(hops) == 1  # same leaf: GID host route delivers directly, no spine
                continue
            assert hops[1].switch == ev.spine
            spines_hit.add(ev.spine)
        assert len(spines_hit) in (0, 9)
        assert len({e.value for e in prof.evs}) == prof.ev_count


def test_broken_route_is_detected(plan):
    """The walker must fail where the plan has no route (so the tests above can fail)."""
    from dataclasses import replace

    sp = plan.switches["p1s1"]
    cut = replace(sp, intents=tuple(i for i in sp.intents
                                    if not (isinstance(i, RouteUsid) and i.usid == 0x2102)))
    broken = replace(plan, switches={**plan.switches, "p1s1": cut})
    ev = srv6_profile(plan, "h1", "h4").evs[0]
    with pytest.raises(EvPlanError, match="p1s1: no route"):
        walk_srv6(broken, "h1", ev.port, ev.value)


def test_deterministic(plan):
    again = build_plan(clos(3, 3, 2, 2))
    assert host_ev_data(plan, "h2", 3) == host_ev_data(again, "h2", 3)


def test_profile_shape(plan):
    d = profile_to_data(srv6_profile(plan, "h1", "h2"))
    assert d["mode"] == "EXP" and d["format"] == "SRV6"
    assert d["format_profile"]["field_widths"] == [32, 16, 16, 16, 16]
    assert d["ev_count"] == len(d["evs"]) == 9
    assert sum(d["format_profile"]["field_widths"]) == 96
    assert bytes.fromhex(d["evs"][0]["ev"]) == ipaddress.IPv6Address(d["evs"][0]["address"]).packed
    s = profile_to_data(stev_profile(plan, "h1", "h2"))
    assert s["format"] == "STEV" and len(bytes.fromhex(s["evs"][0]["ev"])) == 4


def test_bad_requests(plan):
    with pytest.raises(EvPlanError, match="unknown host 'nope'"):
        srv6_profile(plan, "h1", "nope")
    with pytest.raises(EvPlanError, match="itself"):
        stev_profile(plan, "h1", "h1")
    with pytest.raises(EvPlanError, match="evs-per-path"):
        srv6_profile(plan, "h1", "h2", 0)
    with pytest.raises(EvPlanError, match="format"):
        host_ev_data(plan, "h1", formats=("UDP",))


def test_write_files(plan, tmp_path):
    paths = write_ev_files(plan, tmp_path / "y", 2)
    assert sorted(p.name for p in paths) == ["h1.yaml", "h2.yaml", "h3.yaml", "h4.yaml"]
    d = yaml.safe_load(paths[0].read_text())
    assert d["host"] == "h1" and set(d["peers"]) == {"h2", "h3", "h4"}
    assert d["peers"]["h2"]["profiles"]["srv6"]["ev_count"] == 18
    j = write_ev_files(plan, tmp_path / "j", 1, fmt="json")
    assert json.loads(j[1].read_text())["host"] == "h2"


def test_ev_lists_are_symmetric(plan):
    """EV index i names the same (plane, spine) both ways, so a probe on index i tests one path."""
    for a, b in _pairs(plan):
        for build in (srv6_profile, stev_profile):
            fwd, rev = build(plan, a, b, 2).evs, build(plan, b, a, 2).evs
            assert [(e.port, e.spine, e.udp_sport) for e in fwd] == [(e.port, e.spine, e.udp_sport) for e in rev]
