"""Unit tests of the controller's P4Runtime side that need no switch: mapping, diff, probes,
postcard decoding, metrics and log formats."""
from __future__ import annotations

import io
import json
import logging
import os
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest
from p4.v1 import p4runtime_pb2
from prometheus_client import CollectorRegistry, generate_latest

from controller import build_plan, load_topology, wiring
from controller import p4contract as P4
from controller.daemon import JsonFormatter, setup_logging
from controller.mapping import (
    A_NEXT_HOP,
    AP_ECMP,
    QDEPTH_MAX,
    T_EV_DIRECT,
    T_ROUTE_V6,
    T_USID_UN,
    MappingError,
    P4Names,
    canonical,
    desired_state,
)
from controller.metrics import FabricCollector, MetricsSnapshot, SwitchInfo
from controller.p4rt import describe_entity
from controller.plan import PortSetting
from controller.reconcile import SwitchContents, entity_key, plan_updates
from controller.repeatlog import REPEAT_LOG_S
from controller.session import PacketIn
from controller.status import parse, render
from controller.telemetry import Postcard, SwitchCounters, decode_postcard
from controller.wiring import MIN_FRAME, WiringChecker, parse_probe, probe_frame
from mrc_fabric.targets import load_pipeline

TOPO = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "small.yaml")


@pytest.fixture(scope="module")
def names():
    return P4Names.from_p4info(load_pipeline("softswitch", os.environ.get("MRC_P4_PROGRAM")).p4info)


@pytest.fixture(scope="module")
def plan():
    return build_plan(load_topology(TOPO))


def _count(d, names, table):
    tid = names.table(table).preamble.id
    return sum(e.table_entry.table_id == tid for e in d.entries)


def test_leaf_and_spine_entities(names, plan):
    leaf = desired_state(names, plan.switches["p1l1"])
    # /32 drop + 2 spine uSIDs + 2 host-port uSIDs + 4 GIDs (wiring probes need no route)
    assert _count(leaf, names, T_ROUTE_V6) == 9
    assert _count(leaf, names, T_USID_UN) == 1
    assert _count(leaf, names, T_EV_DIRECT) == 2  # one ternary row per spine (2: a power of two)
    # defaults: route_v6 and route_v4 (drop_no_route, not const) and switch_info
    assert (len(leaf.members), len(leaf.groups), len(leaf.defaults), len(leaf.pre)) == (2, 1, 3, 1)
    spine = desired_state(names, plan.switches["p1s1"])
    assert _count(spine, names, T_ROUTE_V6) == 1 + 2 + 4 and not spine.members
    assert desired_state(names, plan.switches["p1l1"]).all() == leaf.all()  # deterministic


def test_byte_strings_canonical_and_lpm_masked(names):
    e = names.table_entry(T_ROUTE_V6, {"dst_addr": ((0xFC00_0000_2101 << 80) | 0xFFFF, 48)}, A_NEXT_HOP,
                          params={"port": 1, "dst_mac": 0x0200_0000_0001, "src_mac": 0})
    fm = e.table_entry.match[0].lpm
    assert fm.value == canonical(0xFC00_0000_2101 << 80) and fm.prefix_len == 48
    assert [p.value for p in e.table_entry.action.action.params] == [b"\x01", bytes.fromhex("020000000001"), b"\x00"]
    with pytest.raises(MappingError, match="no table 'nope'"):
        names.table_entry("nope", {})
    with pytest.raises(MappingError, match="takes"):
        names.action_msg(A_NEXT_HOP, port=1)


def test_an_ecmp_group_over_the_selector_size_is_refused_before_the_write(names):
    """A leaf's ECMP group has one member per spine; ecmp_selector's @max_group_size(64) caps it, and
    the switch would refuse a bigger group on every converge attempt (RESOURCE_EXHAUSTED), so the
    mapping names the switch and the limit instead."""
    from controller.topogen import clos
    assert len(desired_state(names, build_plan(clos(1, 64, 1, 1)).switches["p1l1"]).groups) == 1
    with pytest.raises(MappingError, match=r"^switch p1l1: ECMP group 1 has 65 members, but "
                                           r"ingress\.routing\.ecmp_selector holds at most 64 \(@max_group_size\)$"):
        desired_state(names, build_plan(clos(1, 65, 1, 1)).switches["p1l1"])


def _padded(e: p4runtime_pb2.Entity) -> p4runtime_pb2.Entity:
    """The same entity with every byte string padded (as some clients write them)."""
    out = p4runtime_pb2.Entity()
    out.CopyFrom(e)
    if out.HasField("table_entry"):
        for m in out.table_entry.match:
            if m.HasField("exact"):
                m.exact.value = b"\x00\x00" + m.exact.value
            if m.HasField("lpm"):
                m.lpm.value = m.lpm.value.rjust(16, b"\x00")
        for p in out.table_entry.action.action.params:
            p.value = b"\x00" + p.value
    return out


def _contents(d) -> SwitchContents:
    c = SwitchContents()
    for attr in ("pre", "members", "groups", "entries", "defaults"):
        getattr(c, attr).update({entity_key(e): _padded(e) for e in getattr(d, attr)})
    return c


def test_diff_converged_is_empty_even_with_padded_bytes(names, plan):
    d = desired_state(names, plan.switches["p2l2"])
    assert plan_updates(d, _contents(d)) == []


def test_diff_orders_by_dependency_and_deletes_in_reverse(names, plan):
    d = desired_state(names, plan.switches["p1l1"])
    have = SwitchContents()
    have.members[("action_profile_member", 1, 99)] = names.member(P4.AP_INGRESS_ROUTING_ECMP_SELECTOR, 99, A_NEXT_HOP,
                                                                  port=1, dst_mac=1, src_mac=1)
    phases = plan_updates(d, have)
    assert [p for p, _ in phases] == ["clone_sessions", "members", "groups", "entries", "defaults",
                                      "delete_members"]
    assert all(u.type == p4runtime_pb2.Update.INSERT for _, ups in phases[:4] for u in ups)
    assert phases[4][1][0].type == p4runtime_pb2.Update.MODIFY  # defaults can only be modified
    assert not phases[-1][1][0].entity.action_profile_member.HasField("action")  # DELETE carries the key only


def test_a_changed_routing_default_is_put_back(names, plan):
    """route_v6's default (drop_no_route) is not const: a client writing behind the controller could
    make every miss forward to a port; reconcile must MODIFY it back, as the other defaults."""
    d = desired_state(names, plan.switches["p1s1"])
    have = _contents(d)
    bad = names.default_entry(T_ROUTE_V6, A_NEXT_HOP, port=1, dst_mac=1, src_mac=2)
    assert entity_key(bad) in have.defaults
    have.defaults[entity_key(bad)] = bad
    phases = plan_updates(d, have)
    assert [p for p, _ in phases] == ["defaults"]
    (u,) = phases[0][1]
    assert u.type == p4runtime_pb2.Update.MODIFY and u.entity.table_entry.is_default_action
    assert u.entity.table_entry.action.action.action_id == names.action(P4.A_INGRESS_ROUTING_DROP_NO_ROUTE).preamble.id
    assert describe_entity(bad, names) == "default of route_v6 -> set_next_hop(port=1, dst_mac=00:00:00:00:00:01, src_mac=00:00:00:00:00:02)"


def test_describe_entity_names_the_key_and_action(names, plan):
    d = desired_state(names, plan.switches["p1l1"])
    texts = [describe_entity(e, names) for e in d.all()]
    assert "clone session 100 -> ports [255]" in texts
    assert "route_v6 dst_addr=fc00::/32 -> drop_usid_unknown()" in texts
    assert ("route_v6 dst_addr=fc00:0:1101::/48 -> set_next_hop(port=1, dst_mac=02:00:11:01:00:01, "
            "src_mac=02:00:21:01:00:01)") in texts
    assert "ev_direct group_id=1 ev=0&&&1 priority=1 -> set_next_hop(port=1, dst_mac=02:00:11:01:00:01, " \
           "src_mac=02:00:21:01:00:01)" in texts
    assert "group 1 -> members [1001, 1002]" in texts and "ecmp_select group_id=1 -> group_id 1" in texts


def test_port_thresholds_land_in_their_own_parameters(names, plan):
    """Each port's ECN, trim and drop thresholds reach the parameter of that name (three different numbers
    for the default queue, so a swap shows); a port with trimming off gets QDEPTH_MAX as its trim threshold."""
    for sp in (plan.switches["p1l1"], plan.switches["p2s2"]):
        texts = {describe_entity(e, names) for e in desired_state(names, sp).entries}
        for ps in sp.of(PortSetting):
            assert len({ps.ecn_threshold, ps.trim_threshold, ps.drop_threshold}) == 3, ps
            assert (f"queue_thresholds port={ps.port} -> set_queue_thresholds(trim_threshold={ps.trim_threshold}, "
                    f"drop_threshold={ps.drop_threshold})") in texts, sorted(t for t in texts if "threshold" in t)
            assert f"ecn_threshold port={ps.port} -> set_ecn_threshold(threshold={ps.ecn_threshold})" in texts
    sp = plan.switches["p1l1"]
    off = replace(sp.of(PortSetting)[0], trim_enabled=False)
    texts = {describe_entity(e, names) for e in desired_state(names, replace(sp, intents=(off,))).entries}
    assert (f"queue_thresholds port={off.port} -> set_queue_thresholds(trim_threshold={QDEPTH_MAX}, "
            f"drop_threshold={off.drop_threshold})") in texts


def test_no_entry_of_any_switch_points_at_the_cpu(names, plan):
    """Wiring probes are punted by the program itself: no route (or group member) sends to the CPU."""
    nh = names.action(A_NEXT_HOP)
    port_id = next(p.id for p in nh.params if p.name == "port")
    seen = 0
    for name, sp in plan.switches.items():
        d = desired_state(names, sp)
        for e in [*d.entries, *d.members]:
            act = e.table_entry.action.action if e.HasField("table_entry") else e.action_profile_member.action
            if act.action_id == nh.preamble.id:
                seen += 1
                port = next(p.value for p in act.params if p.param_id == port_id)
                assert port != canonical(255), (name, e)
    assert seen >= 64  # the check looked at every next hop of the fabric (routes, members, EV-map rows)


def test_probe_frame_round_trip():
    f = probe_frame("p1l1", 2, 77, "02:00:21:01:00:02")
    assert len(f) == MIN_FRAME
    assert f[:14] == bytes.fromhex("0180c200000e" "020021010002" "88b5")  # link-probe ethertype
    assert parse_probe(f) == ("p1l1", 2, 77)
    assert parse_probe(f + b"\0" * 20) == ("p1l1", 2, 77)  # extra padding on the way
    assert parse_probe(f[:25]) is None
    assert parse_probe(f.replace(b"MRCWIRE2", b"MRCWIRE0")) is None
    assert parse_probe(f[:12] + b"\x88\xb6" + f[14:]) is None  # the other experimental ethertype
    long = probe_frame("s" * 60, 65535, 2**32 + 5, "02:00:00:00:00:01")
    assert parse_probe(long) == ("s" * 60, 65535, 5) and len(long) > MIN_FRAME
    assert parse_probe(long[:-1]) is None  # name cut short
    with pytest.raises(ValueError, match="255 bytes"):
        probe_frame("x" * 256, 1, 1, "02:00:00:00:00:01")


def test_probe_arrival_counts_only_with_reason_link_probe(plan):
    """A probe frame with another PacketIn reason (a route to the CPU) is consumed, not counted."""
    wc = WiringChecker(plan.topology, plan.sids, {})
    wc._round = 9
    f = probe_frame("p1l1", 1, 9, "02:00:21:01:00:01")
    assert wc.on_packet_in(PacketIn("p1s1", f, {"ingress_port": 1, "reason": 0})) is True
    assert wc._arrivals == {}
    assert wc.on_packet_in(PacketIn("p1s1", f, {"ingress_port": 1, "reason": 3})) is True
    assert {(str(k), str(v)) for k, vs in wc._arrivals.items() for v in vs} == {("p1l1:1", "p1s1:1")}
    assert wc.on_packet_in(PacketIn("p1s1", b"\0" * 60, {"ingress_port": 1, "reason": 3})) is False


class _CableSession:
    """A stand-in switch session for the wiring checker alone: each PacketOut comes back as the
    link-probe PacketIn the far end of the real cable (``cables``) would send, plus the extra
    copies listed in ``extra`` (sent-from end -> other ends that also report it)."""

    def __init__(self, name, cables, extra, checker_ref):
        self.name, self.cables, self.extra, self.ref = name, cables, extra, checker_ref
        self.is_primary = self.may_act = True
        self.names = object()

    def packet_out(self, payload, egress_port):
        src = (self.name, egress_port)
        for sw, port in [self.cables[src], *self.extra.get(src, ())]:
            self.ref[0].on_packet_in(PacketIn(sw, payload, {"ingress_port": port, "reason": 3}))


def test_wiring_check_extra_copies_of_a_probe_do_not_make_a_miswire(plan):
    """A probe seen at its expected end proves the cable, whatever else reports it (a copy seen on
    the sending port itself, or a second copy elsewhere): before, the last arrival overwrote the
    first, so the order of two copies decided between "up" and "miswired"."""
    topo = plan.topology
    cables = {}
    for lk in topo.links:
        if lk.a.node in topo.switches and lk.b.node in topo.switches:
            cables[(lk.a.node, lk.a.port)] = (lk.b.node, lk.b.port)
            cables[(lk.b.node, lk.b.port)] = (lk.a.node, lk.a.port)
    # the copy arrives *after* the real one (the order that used to lose)
    extra = {("p2s1", 2): [("p2s1", 2), ("p2l2", 2)]}
    ref = []
    sessions = {n: _CableSession(n, cables, extra, ref) for n in topo.switches}
    wc = WiringChecker(topo, plan.sids, sessions)
    ref.append(wc)
    rep = wc.check(timeout_s=0.5)
    assert rep.ok, rep.summary()
    assert all(ln.state == "up" for ln in rep.links)


def test_wiring_check_logs_a_finding_once_not_every_round(plan, caplog):
    """A round runs every 0.5 s with the live view on: a dead cable was a WARNING line each time.  Now a
    round's line is INFO/WARNING when its finding changes (and every REPEAT_LOG_S while it stays), DEBUG
    otherwise; a cable that comes back is an INFO line at once."""
    topo = plan.topology
    cables = _cables(topo)
    cut = next(iter(cables))
    dead = {cut: cables.pop(cut)}
    ref = []
    sessions = {n: _CableSession(n, cables, {}, ref) for n in topo.switches}

    class Gone(_CableSession):  # the cut end's probes go nowhere
        def packet_out(self, payload, egress_port):
            if (self.name, egress_port) not in dead:
                super().packet_out(payload, egress_port)

    sessions[cut[0]] = Gone(cut[0], cables, {}, ref)
    wc = WiringChecker(topo, plan.sids, sessions, log=logging.getLogger("test.wiring"))
    ref.append(wc)
    caplog.set_level(logging.DEBUG, logger="test.wiring")

    def levels(rounds):
        caplog.clear()
        for _ in range(rounds):
            wc.check(timeout_s=0.05)
        return [r.levelname for r in caplog.records if r.getMessage() == "wiring check"]

    assert levels(3) == ["WARNING", "DEBUG", "DEBUG"]
    wc._repeat.at -= REPEAT_LOG_S  # a minute later: said again
    assert levels(2) == ["WARNING", "DEBUG"]
    cables.update(dead)
    dead.clear()
    assert levels(2) == ["INFO", "DEBUG"]


def _cables(topo) -> dict:
    cables = {}
    for lk in topo.links:
        if lk.a.node in topo.switches and lk.b.node in topo.switches:
            cables[(lk.a.node, lk.a.port)] = (lk.b.node, lk.b.port)
            cables[(lk.b.node, lk.b.port)] = (lk.a.node, lk.a.port)
    return cables


class _SlowCableSession(_CableSession):
    """Like ``_CableSession``, but the first ``held[end]`` probes sent from an end are held back
    (a slow or lossy target) and come out, late, only when ``release()`` is called."""

    def __init__(self, name, cables, held, checker_ref):
        super().__init__(name, cables, {}, checker_ref)
        self.held, self.pending = held, []

    def packet_out(self, payload, egress_port):
        src = (self.name, egress_port)
        if self.held.get(src, 0) > 0:
            self.held[src] -= 1
            self.pending.append((payload, egress_port))
            return
        super().packet_out(payload, egress_port)

    def release(self):
        pending, self.pending = self.pending, []
        for payload, port in pending:
            super().packet_out(payload, port)


def _slow_checker(plan, held):
    topo, ref = plan.topology, []
    sessions = {n: _SlowCableSession(n, _cables(topo), held, ref) for n in topo.switches}
    wc = WiringChecker(topo, plan.sids, sessions, first_round_s=0.0)
    ref.append(wc)
    return wc, sessions


def test_wiring_check_resends_a_lost_probe_within_the_round(plan):
    """A probe with no arrival half-way through the round is sent again (same round id): one lost
    probe does not make a good cable dead, and the round is no longer for it."""
    wc, _ = _slow_checker(plan, {("p2s1", 2): 1})
    rep = wc.check(timeout_s=0.4)
    assert rep.ok and all(ln.state == "up" for ln in rep.links), rep.summary()
    assert rep.resent == 1 and rep.wait_s == 0.4


def test_wiring_check_waits_longer_on_a_slow_target(plan):
    """bmv2 once needed more than the timeout for one probe (p2s1:2 -> p2l2:1), and the check called
    the cable dead.  A probe that arrives after its round is counted as late and its delay makes the
    next rounds wait long enough: the same slowness then shows the cable up."""
    held = {("p2s1", 2): 2}  # the first copy and the resend are both held back
    wc, sessions = _slow_checker(plan, held)
    rep = wc.check(timeout_s=0.2)
    assert {(str(s), str(e)) for s, e in rep.dead} == {("p2s1:2", "p2l2:1")} and rep.resent == 1
    time.sleep(0.3)  # the held copies come out 0.5 s after they were sent: a slow target
    sessions["p2s1"].release()
    assert wc.round_wait(0.2) >= 3 * 0.45
    held[("p2s1", 2)] = 1
    t0 = time.monotonic()
    threading.Timer(0.4, sessions["p2s1"].release).start()  # this round's first copy, 0.4 s late
    rep = wc.check(timeout_s=0.2)
    assert rep.ok and rep.late_before == 2 and rep.wait_s >= 1.35, rep.summary()
    # the round ended with the last arrival (0.4 s), not at wait_s (>= 1.35 s)
    assert time.monotonic() - t0 < 1.3


def test_wiring_check_dead_cable_is_dead_after_one_round(plan):
    """A cable that never carries a probe is dead after one round of the caller's timeout (on a fast
    target nothing is lengthened); the others are up."""
    held = {("p2s1", 2): 99}
    wc, _ = _slow_checker(plan, held)
    t0 = time.monotonic()
    rep = wc.check(timeout_s=0.3)
    assert time.monotonic() - t0 < 1.2  # one round of 0.3 s, not lengthened (a first round waits 3 s)
    assert {(str(s), str(e)) for s, e in rep.dead} == {("p2s1:2", "p2l2:1")}
    assert rep.resent == 1 and held[("p2s1", 2)] == 97
    states = {(str(ln.a), str(ln.b)): ln.state for ln in rep.links}
    assert sum(st == "half" for st in states.values()) == 1 and sum(st == "up" for st in states.values()) == 7


def test_wiring_check_link_to_a_stopped_switch_is_dead_not_half(plan):
    """A stopped switch is skipped (not probed) and reports nothing: the probes its neighbours send it
    never arrive.  Its links are dead: "half" ("only p1l2:1->p1s1:2") claimed the direction from the
    switch nobody could probe worked (seen with `mrc-fabric fault switch-stop p1l2`)."""
    held = {("p1s1", 2): 99, ("p1s2", 2): 99}  # what p1s1 and p1s2 send to p1l2 is lost
    wc, sessions = _slow_checker(plan, held)
    sessions["p1l2"].may_act = False
    rep = wc.check(timeout_s=0.3)
    assert rep.skipped == ["p1l2"]
    states = {(str(ln.a), str(ln.b)): (ln.state, ln.detail) for ln in rep.links}
    assert {k: v for k, v in states.items() if v[0] != "up"} == {
        ("p1l2:1", "p1s1:2"): ("dead", "no probe arrived; p1l2 not probed"),
        ("p1l2:2", "p1s2:2"): ("dead", "no probe arrived; p1l2 not probed")}


def test_links_of_a_connected_switch_that_cannot_report_probes_yet_are_unknown_not_dead(plan):
    """At start-up a switch whose stream is up but which has no P4Info names yet (still converging) is
    skipped, and the PacketIns of the probes its neighbours send it cannot be read as arrivals: its
    links were reported dead (a WARNING line and mrc_link_up 0 until the next round; h-new3).  They are
    unknown: no dead probe, no state, the round ok.  Once it can report, they are judged again."""
    held = {("p1s1", 2): 99, ("p1s2", 2): 99}  # what reaches p1l2 is not seen (its session has no names)
    wc, sessions = _slow_checker(plan, held)
    sessions["p1l2"].names = None
    sessions["p1l2"].stream_up = threading.Event()
    sessions["p1l2"].stream_up.set()
    rep = wc.check(timeout_s=0.3)
    assert rep.skipped == ["p1l2"] and rep.unseen == ["p1l2"]
    assert rep.ok and rep.dead == [], rep.summary()
    assert ("p1l2:1", "p1s1:2") not in wc.liveness and ("p1l2:2", "p1s2:2") not in wc.liveness
    assert len(wc.liveness) == len(wc.links) - 2 and set(wc.liveness.values()) == {"up"}
    sessions["p1l2"].stream_up.clear()  # stopped: its links are dead, as a stopped switch's are
    rep = wc.check(timeout_s=0.3)
    assert rep.unseen == [] and {(str(s), str(e)) for s, e in rep.dead} == {("p1s1:2", "p1l2:1"),
                                                                           ("p1s2:2", "p1l2:2")}
    assert wc.liveness[("p1l2:1", "p1s1:2")] == "dead"


def test_a_link_no_round_could_judge_is_unknown_not_dead(plan):
    """Before the first round, on a backup controller (it never probes) and while both of a link's
    switches are skipped, nothing is known of the link: the metrics export no state for it and the
    live view says "unknown" (controller/web/state.py).  Every link used to start dead, so a backup's
    /metrics had mrc_link_up 0 for the whole fabric, for good."""
    wc, sessions = _slow_checker(plan, {})
    assert wc.liveness == {}
    for s in sessions.values():  # a backup: no switch may be probed
        s.may_act = False
    wc.check(timeout_s=0.1)
    assert wc.liveness == {}
    for s in sessions.values():
        s.may_act = True
    wc.check(timeout_s=0.3)
    assert set(wc.liveness.values()) == {"up"} and len(wc.liveness) == len(wc.links)
    sessions["p1l2"].may_act = sessions["p1s1"].may_act = False  # both ends of p1l2:1 -- p1s1:2 skipped
    wc.check(timeout_s=0.3)
    assert ("p1l2:1", "p1s1:2") not in wc.liveness and len(wc.liveness) == len(wc.links) - 1


def test_wiring_checker_first_round_waits_for_a_slow_target(plan):
    """A new checker knows nothing about the target: its first round waits ``first_round_s`` at least."""
    topo = plan.topology
    assert WiringChecker(topo, plan.sids, {}).round_wait(0.5) == wiring.FIRST_ROUND_S
    assert WiringChecker(topo, plan.sids, {}, first_round_s=0.0).round_wait(0.5) == 0.5


def test_wiring_rounds_of_two_checkers_differ(plan):
    """Round ids start at random: a late probe of one checker never counts for another."""
    a = WiringChecker(plan.topology, plan.sids, {})
    b = WiringChecker(plan.topology, plan.sids, {})
    assert next(a._rounds) != next(b._rounds)


class _PiLikeSession:
    """Answers reads the way PI/bmv2 does: a direct-counter wildcard over all tables (table_id 0) is
    UNIMPLEMENTED; per-table wildcards return one entry per table entry."""

    def __init__(self, names):
        self.name, self.names, self.reads, self.requests = "s", names, [], 0

    def read(self, entities, timeout_s=None):
        import grpc

        from controller.session import SessionError

        out = []
        self.requests += 1
        for e in entities:
            self.reads.append(e)
            if e.WhichOneof("entity") == "register_entry":
                raise SessionError("switch s: Read: UNIMPLEMENTED: Register reads are not supported yet",
                                   grpc.StatusCode.UNIMPLEMENTED)
            if e.WhichOneof("entity") == "counter_entry":
                r = p4runtime_pb2.Entity()
                r.counter_entry.CopyFrom(e.counter_entry)
                r.counter_entry.data.packet_count = 3
                r.counter_entry.data.byte_count = 300
                out.append(r)
            if e.WhichOneof("entity") == "direct_counter_entry":
                tid = e.direct_counter_entry.table_entry.table_id
                if tid == 0:
                    raise SessionError("switch s: Read: UNIMPLEMENTED: Reading all direct counters for ALL "
                                       "tables is not supported yet")
                r = p4runtime_pb2.Entity()
                r.direct_counter_entry.table_entry.table_id = tid
                r.direct_counter_entry.data.packet_count = 7
                r.direct_counter_entry.data.byte_count = 700
                out.append(r)
        return out


def test_a_counter_poll_of_a_session_without_names_is_a_session_error(names):
    """A reconnect clears a session's names (until the next converge) between the daemon's check and the
    poll's own read: the poll raises a SessionError, which the daemon logs as a failed read, not a
    ValueError that left its worker pool (review h-rev7)."""
    import pytest

    from controller.session import SessionError
    from controller.telemetry import TelemetryCollector

    s = _PiLikeSession(names)
    s.names = None
    with pytest.raises(SessionError, match="no P4Info yet"):
        TelemetryCollector({}).poll(s)


def test_counter_poll_reads_direct_counters_one_table_at_a_time(names):
    """bmv2 (PI) refuses the all-tables direct-counter wildcard; the poll asks per table and sums."""
    from controller.telemetry import TelemetryCollector

    s = _PiLikeSession(names)
    got = TelemetryCollector({}).poll(s)
    with_dc = {names.table_by_id[dc.direct_table_id].preamble.name for dc in names.p4info.direct_counters}
    assert with_dc and set(got.tables) == with_dc
    assert all(v == (7, 700) for v in got.tables.values())


def test_counter_poll_keeps_the_counters_of_a_switch_that_reads_no_registers(names):
    """PI (so bmv2) answers a RegisterEntry read UNIMPLEMENTED.  The counters go in one request and the
    queue-depth registers in another, so the counters survive; the switch is not asked again."""
    from controller.p4contract import CPU_PORT
    from controller.telemetry import TelemetryCollector

    s = _PiLikeSession(names)
    tc = TelemetryCollector({"s": (1, 2)})
    got = tc.poll(s)
    assert set(got.port_rx) == set(got.port_tx) == {1, 2, CPU_PORT} and got.port_rx[1] == (3, 300)
    assert got.tables and not got.qdepth and tc.counters["s"] is got
    assert s.requests == 2 and tc.no_register_reads == {"s"}
    got = tc.poll(s)
    assert s.requests == 3 and got.port_tx[2] == (3, 300)  # counters only: registers are not asked again


def test_postcard_decoding():
    from scapy.layers.inet6 import IPv6
    from scapy.layers.l2 import Ether

    from mrc.wire.layers import MrcTelemetryRecord

    rec = bytes(MrcTelemetryRecord(switch_id=0x2101, ingress_port=3, egress_port=1, ingress_ts_us=5,
                                   hop_latency_us=7, queue_depth=9, queue_id=0))
    pc = decode_postcard(PacketIn("p1l1", rec + bytes(Ether() / IPv6()), {"reason": 2}))
    h = pc.hop
    assert (h.switch_id, h.ingress_port, h.egress_port, h.hop_latency_us, h.queue_depth) == (0x2101, 3, 1, 7, 9)
    assert pc.packet.startswith("Ether / ::1 > ::1")
    with pytest.raises(ValueError, match="need 20"):
        decode_postcard(PacketIn("p1l1", b"\x00" * 5, {"reason": 2}))


def _snapshot() -> MetricsSnapshot:
    from mrc.wire.codec import TelemetryRecord

    c = SwitchCounters(port_rx={3: (10, 1000)}, port_tx={1: (9, 900)}, drops={"no_route": (2, 200)},
                       tables={P4.T_INGRESS_SRV6_USID_UN: (10, 1000)}, qdepth={1: 4})
    card = Postcard("p1l1", TelemetryRecord(0x2101, 3, 1, 5, 7, 9, 0), "Ether / IPv6", 0.0)
    return MetricsSnapshot({"p1l1": SwitchInfo(connected=True, primary=True, converged=True, desired_entities=281)},
                           {"p1l1": c}, {"p1l1": 1}, [card],
                           {("p1l1:1", "p1s1:1"): "up", ("p1l1:2", "p1s2:1"): "dead"}, {"dead": 2})


def test_metrics_text_and_status_view():
    reg = CollectorRegistry(auto_describe=False)
    reg.register(FabricCollector(_snapshot))
    text = generate_latest(reg).decode()
    assert 'mrc_port_rx_packets_total{port="3",switch="p1l1"} 10.0' in text
    assert 'mrc_drop_packets_total{reason="no_route",switch="p1l1"} 2.0' in text
    assert 'mrc_link_up{a="p1l1:2",b="p1s2:1"} 0.0' in text
    assert 'mrc_queue_depth_packets{port="1",switch="p1l1"} 4.0' in text
    assert 'mrc_postcard_hop_latency_us{switch="p1l1"} 7.0' in text
    assert 'mrc_postcard_queue_depth{switch="p1l1"} 9.0' in text
    d = parse(text)
    assert d.links == {("p1l1:1", "p1s1:1"): "up", ("p1l1:2", "p1s2:1"): "dead"}
    assert d.drops == {("p1l1", "no_route"): 2.0} and d.wiring == {"dead": 2.0}
    from rich.console import Console

    con = Console(file=io.StringIO(), width=120)
    con.print(render(d))
    out = con.file.getvalue()
    assert "p1l1:2" in out and "dead" in out and "no_route" in out


def test_status_view_of_a_controller_without_the_up_and_refused_series():
    """A controller from before 2026-12-07 exports neither mrc_switch_up nor mrc_switch_refused: the view
    says it cannot tell ("-"), not "stale" beside the current counters that controller exports."""
    from rich.console import Console

    text = "\n".join(f'{n}{{switch="p1l1"}} 1.0' for n in ("mrc_switch_connected", "mrc_switch_primary",
                                                          "mrc_switch_converged")) + "\n"
    d = parse(text)
    con = Console(file=io.StringIO(), width=160)
    con.print(render(d))
    row = next(line for line in con.file.getvalue().splitlines() if "p1l1" in line)
    cells = [c.strip() for c in row.strip("│ ").split("│")]
    assert cells[:6] == ["p1l1", "yes", "-", "yes", "yes", "-"], cells
    up = parse(text + 'mrc_switch_up{switch="p1l1"} 0.0\nmrc_switch_refused{switch="p1l1"} 0.0\n')
    con = Console(file=io.StringIO(), width=160)
    con.print(render(up))
    row = next(line for line in con.file.getvalue().splitlines() if "p1l1" in line)
    assert [c.strip() for c in row.strip("│ ").split("│")][:6] == ["p1l1", "yes", "stale", "yes", "yes", "no"]


def test_status_view_counts_connect_failures_and_refusals_apart():
    """A refusal (the switch answered and said no) is no failure to connect: two counters, two columns;
    "-" for the refusals of a controller from before 2026-12-07 (they are among its connect failures)."""
    from rich.console import Console

    snap = _snapshot()
    snap.switches["p1l1"].connect_failures, snap.switches["p1l1"].refusals = 3, 5
    reg = CollectorRegistry(auto_describe=False)
    reg.register(FabricCollector(lambda: snap))
    text = generate_latest(reg).decode()
    assert 'mrc_switch_connect_failures_total{switch="p1l1"} 3.0' in text
    assert 'mrc_switch_refusals_total{switch="p1l1"} 5.0' in text

    def row(d):
        con = Console(file=io.StringIO(), width=200)
        con.print(render(d))
        out = con.file.getvalue()
        assert "connect failures" in out and "refusals" in out
        line = next(line for line in out.splitlines() if "p1l1" in line)
        return [c.strip() for c in line.strip("│ ").split("│")][-2:]

    assert row(parse(text)) == ["3", "5"]
    old = "\n".join(ln for ln in text.splitlines() if "mrc_switch_refusals" not in ln) + "\n"
    assert row(parse(old)) == ["3", "-"]


def test_outside_pipeline_drops_in_metrics_and_status_view():
    """Frames a switch lost outside its pipeline come from whoever runs the switches (the fabric reads
    softswitch's port statistics): one series per switch and place, shown beside the program's drop
    reasons; no series where nobody counted them."""
    snap = _snapshot()
    snap.outside_drops = {"p1l1": {"kernel_rx": 0, "queue_tail": 3, "rx_error": 0, "tx": 15}}
    reg = CollectorRegistry(auto_describe=False)
    reg.register(FabricCollector(lambda: snap))
    text = generate_latest(reg).decode()
    assert 'mrc_outside_drop_packets_total{switch="p1l1",where="tx"} 15.0' in text
    assert 'mrc_outside_drop_packets_total{switch="p1l1",where="kernel_rx"} 0.0' in text
    d = parse(text)
    assert d.drops == {("p1l1", "no_route"): 2.0, ("p1l1", "outside the pipeline: transmit"): 15.0,
                       ("p1l1", "outside the pipeline: traffic-manager tail"): 3.0}
    reg2 = CollectorRegistry(auto_describe=False)
    reg2.register(FabricCollector(_snapshot))
    assert "mrc_outside_drop_packets_total{" not in generate_latest(reg2).decode()


def test_controller_metrics_take_outside_drops_from_its_reader():
    """``Controller.outside_drops``: called at each snapshot; a reader that fails costs those series and
    logs why, never the scrape."""
    from controller.daemon import Controller, Options

    small = Path(__file__).resolve().parents[2] / "examples" / "small.yaml"
    ctl = Controller(build_plan(load_topology(small)), load_pipeline("softswitch"), Options())
    try:
        assert ctl.metrics_snapshot().outside_drops == {}
        ctl.outside_drops = lambda: {"p1s1": {"tx": 4}}
        assert ctl.metrics_snapshot().outside_drops == {"p1s1": {"tx": 4}}

        def broken() -> dict:
            raise ConnectionRefusedError("switch stopped")

        ctl.outside_drops = broken
        assert ctl.metrics_snapshot().outside_drops == {}
    finally:
        ctl.close()


def test_the_live_view_does_not_read_outside_drops():
    """The live view polls a snapshot every 250 ms and shows no outside-pipeline drops: its polls must not
    cost a port-statistics request to every switch it watches (review h-bench2: 4.6-4.8 ms a poll and
    32 requests/s on the demo's switches); the Prometheus snapshot still reads them."""
    from controller.daemon import Controller, Options
    from controller.web import serve_view

    small = Path(__file__).resolve().parents[2] / "examples" / "small.yaml"
    ctl = Controller(build_plan(load_topology(small)), load_pipeline("softswitch"), Options())
    calls: list[int] = []

    def reader() -> dict:
        calls.append(1)
        return {"p1s1": {"tx": 4}}

    ctl.outside_drops = reader
    view = serve_view(ctl, 0)
    try:
        view.view.document()
        assert calls == []
        assert ctl.metrics_snapshot().outside_drops == {"p1s1": {"tx": 4}} and calls == [1]
    finally:
        view.stop()
        ctl.close()


def test_json_log_lines():
    buf = io.StringIO()
    setup_logging("json", "info", buf)
    logging.getLogger("controller.test").info("reconciled", extra={"fields": {"switch": "p1l1", "written": 0}})
    doc = json.loads(buf.getvalue().splitlines()[-1])
    assert doc["msg"] == "reconciled" and doc["switch"] == "p1l1" and doc["written"] == 0
    assert isinstance(JsonFormatter().format(logging.makeLogRecord({"msg": "x"})), str)


def test_daemon_reads_the_switches_counters_spread_over_the_interval():
    """Each switch once per counters_interval_s, the n switches i/n of an interval apart (all at once
    was a burst of P4Runtime work in every software switch that stalled every path)."""
    from controller.daemon import Controller, Options

    c = Controller.__new__(Controller)
    c.opts = Options(counters_interval_s=2.0)
    c.sessions = {n: None for n in ("a", "b", "c", "d")}
    c._next_counters = {}
    assert c._counters_due(100.0) == ["a"]
    assert c._counters_due(100.4) == []
    assert c._counters_due(100.5) == ["b"]
    assert c._counters_due(101.6) == ["c", "d"]
    assert c._counters_due(102.0) == ["a"]  # its next interval
    assert c._counters_due(110.0) == ["a", "b", "c", "d"]  # a stalled loop reads each once, not a backlog
    assert c._counters_due(111.0) == []


def test_library_names_of_the_docs_are_importable_from_controller():
    """docs/controller.md's Python API (and examples/scripting/) import these from ``controller``:
    each is the daemon's own object, and every name in ``__all__`` resolves."""
    import controller
    from controller import daemon

    for name in ("Controller", "Options", "setup_logging"):
        assert getattr(controller, name) is getattr(daemon, name)
    for name in controller.__all__:
        assert getattr(controller, name) is not None


class _DelayedCableSession(_SlowCableSession):
    """Like ``_SlowCableSession``, but every probe that gets through arrives ``delay_s`` after it was
    sent (a PacketIn takes its time through a software switch and the controller's stream)."""

    delay_s = 0.4

    def packet_out(self, payload, egress_port):
        threading.Timer(self.delay_s, super().packet_out, (payload, egress_port)).start()


def test_wiring_rounds_from_two_threads_do_not_spoil_each_other(plan):
    """Controller.run()'s wiring thread and a script's wiring_check() may start rounds at the same
    time (both public).  A round started while another was still waiting for a dead cable lost all
    its arrivals when the first one ended (it closed the checker's current round), so every cable was
    reported dead.  Each round must see exactly the one dead cable."""
    topo, ref = plan.topology, []
    held = {("p2s1", 2): 99}  # one dead cable: every round waits its whole timeout
    sessions = {n: _DelayedCableSession(n, _cables(topo), held, ref) for n in topo.switches}
    wc = WiringChecker(topo, plan.sids, sessions, first_round_s=0.0)
    ref.append(wc)
    reports = []
    first = threading.Thread(target=lambda: reports.append(wc.check(timeout_s=1.0)))
    first.start()
    time.sleep(0.8)  # the second round's probes are still in flight when the first round ends (1.0 s)
    reports.append(wc.check(timeout_s=1.0))
    first.join(10)
    assert len(reports) == 2
    for rep in reports:
        assert {(str(s), str(e)) for s, e in rep.dead} == {("p2s1:2", "p2l2:1")}, rep.summary()
        assert sum(ln.state == "up" for ln in rep.links) == 7, rep.summary()


def test_a_group_without_max_group_size_can_grow_on_the_switch():
    """With no @max_group_size in the P4Info (0) the controller writes a group's max_size 0 ("not
    known at creation", p4runtime.proto), so a plane that gains a spine MODIFYs its leaves' ECMP group
    to one more member.  Until 2026-12-07 it wrote the member count, and the MODIFY named another
    max_size, which PI and softswitch refuse (INVALID_ARGUMENT) on every converge.  With the field set
    (mrc_switch.p4's 64, which p4c writes) the group names it."""
    from controller.topogen import clos
    from softswitch.runtime import SwitchState

    p4info = _program_p4info()
    names64 = P4Names.from_p4info(p4info)
    assert [g.action_profile_group.max_size for g in
            desired_state(names64, build_plan(clos(1, 2, 1, 1)).switches["p1l1"]).groups] == [64]
    for ap in p4info.action_profiles:
        ap.max_group_size = 0
    names = P4Names.from_p4info(p4info)
    switch = SwitchState(p4info)
    held: set[int] = set()
    for spines, utype in ((2, p4runtime_pb2.Update.INSERT), (3, p4runtime_pb2.Update.MODIFY)):
        d = desired_state(names, build_plan(clos(1, spines, 1, 1)).switches["p1l1"])
        for m in d.members:
            if m.action_profile_member.member_id not in held:
                switch.write(p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT, entity=m))
                held.add(m.action_profile_member.member_id)
        (g,) = d.groups
        switch.write(p4runtime_pb2.Update(type=utype, entity=g))  # (refused here until 2026-12-07)
    assert g.action_profile_group.max_size == 0
    (got,) = switch.read(p4runtime_pb2.Entity(action_profile_group=p4runtime_pb2.ActionProfileGroup(
        action_profile_id=names.profile(AP_ECMP).preamble.id)))
    assert len(got.action_profile_group.members) == 3


def _program_p4info():
    """A copy of the program's P4Info (the test changes it)."""
    from p4.config.v1 import p4info_pb2

    out = p4info_pb2.P4Info()
    out.CopyFrom(load_pipeline("softswitch", os.environ.get("MRC_P4_PROGRAM")).p4info)
    return out


def test_an_attempt_that_fails_after_an_interrupt_promises_no_retry(caplog):
    """Ctrl-C on `run --once`: attempts in flight that failed afterwards logged "switch not converged; will
    retry" under the "interrupted" line, though nothing retries once the controller closes."""
    import logging

    from controller.daemon import Controller, Options

    small = Path(__file__).resolve().parents[2] / "examples" / "small.yaml"
    ctl = Controller(build_plan(load_topology(small)), load_pipeline("softswitch"),
                     Options(grpc_base_port=1), logging.getLogger("controller.test"))  # nothing listens there
    try:
        with caplog.at_level(logging.INFO, logger="controller.test"):
            assert ctl._attempt("p1s1") is None
            assert caplog.records[-1].getMessage() == "switch not converged; will retry"
            ctl.interrupt()
            assert ctl._attempt("p1s2") is None
        rec = caplog.records[-1]
        assert rec.getMessage() == "switch not converged; giving up" and "retry_in_s" not in rec.fields
    finally:
        ctl.close()


@pytest.mark.parametrize(("kw", "said"), [
    ({"retries": 0}, "Options.retries must be 1 or more, got 0"),  # "not converged" for all, none tried
    ({"election_id": 0}, "Options.election_id must be 1 .. 2^128-1, got 0"),
    ({"election_id": 1 << 128}, "Options.election_id must be 1 .. 2^128-1"),
    ({"grpc_base_port": 70000}, "Options.grpc_base_port must be 1 .. 65535, got 70000"),
    ({"stev_mode": "ecmpp"}, "Options.stev_mode must be one of ecmp, ev_direct, got 'ecmpp'"),
    ({"watch_qps": (0x1000000,)}, "Options.watch_qps: 0x1000000 is not a 24-bit QP number"),
    ({"wiring_timeout_s": 0}, "Options.wiring_timeout_s must be more than 0 seconds (and finite), got 0"),
    ({"reconcile_interval_s": float("inf")}, "Options.reconcile_interval_s must be more than 0 seconds"),
    ({"tick_s": float("nan")}, "Options.tick_s must be more than 0 seconds"),
])
def test_options_refuses_what_the_command_line_refuses(kw, said):
    """A script builds Options itself (docs/controller.md): the numbers `mrc-controller run` refuses
    were taken as given there until 2026-12-08."""
    from controller import Options

    with pytest.raises(ValueError) as e:
        Options(**kw)
    assert said in str(e.value)
    Options(election_id=(1 << 128) - 1, grpc_base_port=65535, watch_qps=(0xFFFFFF,), counters_timeout_s=None)
