"""Every QP binds to mrc_ctl profiles by id: the fabric simulator, mrc.sim's pairs, mrc-perf (issue 11 item 4).

Pure logic over real ``mrc.core`` endpoints and the real simulator: EV profiles per host pair are
shared by the QPs of that pair (a controller's deny reaches all of them), NSCC and "none" are ctl CC
profiles bound by ``cc_profile_id``, DCQCN stays a named algorithm, and a ``modify_cc_profile`` on an
ONLINE profile reaches every bound QP before its next data packet.
"""
from __future__ import annotations

import dataclasses
import ipaddress
import random

import pytest

from mrc.cli import build_parser, perf_params
from mrc.core import Endpoint, NsccConfig, QpAttr
from mrc.core.cc import DEFAULT_BASE_RTT_NS, VENDOR_CFG_LEARN_BASE_RTT
from mrc.ctl import (
    CC_ALGO_NSCC,
    CcProfileAttr,
    CcProfileAttrMask,
    EvOp,
    EvOpArgs,
    EvOpEntry,
    EvProfileAttr,
    EvProfileAttrMask,
    EvState,
)
from mrc.endpoint.perf import PerfError, PerfParams, cc_binding
from mrc.endpoint.plan import direct_evs
from mrc.sim import PathSpec, make_pair, transfer
from mrc.sim.network import Network
from mrc.sim.scenario import srv6_carrier
from mrc_fabric.scenarios import parse_scenario
from mrc_fabric.sim.engine import SimRun

GID_A = ipaddress.IPv6Address("fd00::a").packed
GID_B = ipaddress.IPv6Address("fd00::b").packed

TWO_HOSTS = {  # h1 and h3 (different leaves of examples/small.yaml) write to each other: 2 QPs per host, one peer
    "fabric": {"topology": "examples/small.yaml"},
    "traffic": {"pattern": "all-to-all", "hosts": ["h1", "h3"], "size": "64K", "count": 2, "rate_gbps": 100,
                "ack_timeout": 8, "reorder_ms": 0.004, "probe_interval_ms": 0.05, "cc": "nscc"},
    "sim": {"link_gbps": 100, "delay_ns": 1000, "queue_packets": 64, "shuffle_evs": False},
    "deadline_s": 0.005, "measure": {"sample_ms": 0.001, "bin_ms": 0.005, "congestion_ms": 0.005},
}


def _sim(mode: str = "mrc", **traffic) -> SimRun:
    data = {**TWO_HOSTS, "traffic": {**TWO_HOSTS["traffic"], **traffic}}
    return SimRun(parse_scenario(data), mode)


def _deny_slot0(ep: Endpoint, pid: int) -> None:
    prof = ep.ctl.ev_profile(pid)
    ep.ctl.modify_ev_profile(pid, EvProfileAttr(ev_op=EvOpArgs(EvOp.MODIFY_EV_STATE, [
        EvOpEntry(ev=prof.evs[0], state=EvState.DENIED)])), EvProfileAttrMask.EV_OP)


def test_simulator_qps_of_a_host_pair_share_one_ev_profile_and_both_see_a_deny():
    base = _sim().run()
    assert base["completed"] and base["switch_counters"]["p1s1"]["tx"] > 0  # slot 0 is the path via p1s1

    run = _sim()
    for h in (0, 2):  # h1 and h3: the QP that sends to the peer and the one that receives from it
        ep = run.eps[h]
        qps = list(ep.qps.values())
        assert len(qps) == 2
        pid = qps[0].attr.ev_profile_id
        assert pid is not None and all(q.attr.ev_profile_id == pid for q in qps)
        assert all(q.evset.prof is ep.ctl.ev_profile(pid) for q in qps)  # one profile object: shared states
        _deny_slot0(ep, pid)
        assert [ep.ev_states(q)[0] for q in qps] == [EvState.DENIED, EvState.DENIED]
    r = run.run()
    assert r["completed"] and all(v["verify"][k]["bad_count"] == 0 for v in r["hosts"].values() for k in v["verify"])
    assert r["switch_counters"]["p1s1"]["tx"] == 0  # neither QP (data nor ACKs) used the denied path


def test_simulator_nscc_is_one_ctl_cc_profile_learning_the_base_rtt_dcqcn_stays_a_name():
    run = _sim()
    for ep in (run.eps[0], run.eps[2]):
        pids = {q.attr.cc_profile_id for q in ep.qps.values()}
        assert len(pids) == 1 and None not in pids
        (pid,) = pids
        q = ep.ctl.query_cc_profile(pid, CcProfileAttrMask.ALGORITHM | CcProfileAttrMask.CONFIG
                                    | CcProfileAttrMask.VENDOR_CFG)
        assert q.algorithm == CC_ALGO_NSCC and q.vendor_cfg == VENDOR_CFG_LEARN_BASE_RTT
        assert q.cc_config.base_rtt == DEFAULT_BASE_RTT_NS
        assert all(qp.cc_profile is ep.ctl.cc_profile(pid) and qp.attr.cc == q.cc_config for qp in ep.qps.values())

    fixed = _sim(nscc={"base_rtt": 14_000, "max_cwnd": 300_000})
    qp = next(iter(fixed.eps[0].qps.values()))
    assert qp.attr.cc.base_rtt == 14_000 and qp.attr.cc.max_cwnd == 300_000 and not qp.attr.cc_learn_base_rtt

    rc = _sim("rc", cc="dcqcn")
    assert all(q.attr.cc_profile_id is None and q.attr.cc == "dcqcn" for q in rc.eps[0].qps.values())
    none = _sim(cc="none")
    qp = next(iter(none.eps[0].qps.values()))
    assert qp.attr.cc_profile_id is not None and qp.cc_profile.algorithm is None and qp.attr.cc is None


def test_mrc_sim_pairs_bind_ev_and_cc_profiles_and_still_deliver():
    paths = [PathSpec(rate_bps=10e9, delay_ns=2000) for _ in range(4)]
    p = make_pair(paths, attr=QpAttr(cc="nscc"))
    for ep, qp in ((p.a, p.qa), (p.b, p.qb)):
        assert qp.evset.prof is ep.ctl.ev_profile(qp.attr.ev_profile_id)
        assert qp.cc_profile is ep.ctl.cc_profile(qp.attr.cc_profile_id) and qp.cc_profile.algorithm == CC_ALGO_NSCC
    data = bytes(range(256)) * 1024
    transfer(p, [(1, data, 0x1000_0000, None)])
    assert p.done[0].status.name == "SUCCESS" and bytes(p.mr.buf[:len(data)]) == data
    assert p.qa.cc.min_rtt > 0 and p.qa.cc.cfg.base_rtt == p.qa.cc.min_rtt  # learnt, as the name "nscc" learns
    dc = make_pair(paths, attr=QpAttr(mode="rc", cc="dcqcn"))
    assert dc.qa.attr.cc_profile_id is None and dc.qa.cc_profile is None


def _connected_qps(ep: Endpoint, n: int, attr: QpAttr, ev_pid: int) -> list:
    qps = [ep.create_qp(attr=QpAttr(**{**{k: getattr(attr, k) for k in attr.__slots__}, "ev_profile_id": ev_pid}))
           for _ in range(n)]
    for i, qp in enumerate(qps):
        ep.connect(qp, 0x300 + i, GID_B, 0, 0)
        qp.post_write(1, bytes(64 << 10), 0x1000, 0x55)
    return qps


def test_mrc_perf_cc_nscc_binds_one_cc_profile_and_a_runtime_change_reaches_every_qp():
    a = build_parser().parse_args(["client", "--ifaces", "veth0,veth1", "--peer", "unix:/nonexistent", "--cc", "nscc",
                                   "--nscc", "base_rtt=20000", "--nscc", "max_cwnd=500000", "--qps", "3"])
    prm = perf_params(a)
    prm.check()
    assert prm.nscc == {"base_rtt": 20000, "max_cwnd": 500000}
    ep = Endpoint(GID_A, [1, 2], encap="srv6", port_rate_bps=10e9)
    ev_pid = ep.make_ev_profile(direct_evs("srv6", ep.ports, 2, 0xA, 0xB), 1)  # what mrc-perf does without a plan
    cc, cc_pid = cc_binding(ep, prm.cc_name(), prm.nscc, prm.mode, 4096)
    assert cc is None and cc_pid is not None
    qps = _connected_qps(ep, prm.qps, QpAttr(mode=prm.mode, cc=cc, cc_profile_id=cc_pid), ev_pid)
    assert all(q.attr.cc_profile_id == cc_pid and q.cc.cfg.base_rtt == 20000 and q.cc.cfg.max_cwnd == 500000
               for q in qps)
    assert all(q.cc.cwnd == 500000 for q in qps)
    ep.datagrams_to_send(0)

    new = ep.ctl.query_cc_profile(cc_pid, CcProfileAttrMask.CONFIG).cc_config.replace(max_cwnd=50_000)
    ep.ctl.modify_cc_profile(cc_pid, CcProfileAttr(cc_config=new), CcProfileAttrMask.CONFIG)  # ONLINE, QPs bound
    sent = ep.datagrams_to_send(1_000_000)  # every QP's next data packet
    assert sent
    assert all(q.cc.cfg == new and q.cc.cwnd <= 50_000 and q.attr.cc == new for q in qps)

    with pytest.raises(PerfError, match="base_rtt"):
        PerfParams(cc="nscc", nscc={"max_cwnd": 1}).check()
    with pytest.raises(PerfError, match="dcqcn"):
        PerfParams(mode="rc", nscc={"base_rtt": 1}).check()
    assert cc_binding(ep, "dcqcn", {}, "rc", 4096) == ("dcqcn", None)  # not an mrc_ctl algorithm


def test_agent_style_learning_profile_change_reaches_every_qp_and_stops_learning():
    ep = Endpoint(GID_A, [1, 2], encap="stev", port_rate_bps=10e9)
    ev_pid = ep.make_ev_profile(direct_evs("stev", ep.ports, 2, 0xA, 0xB), 1)
    cc_pid = ep.make_cc_profile("nscc", mode="mrc", mtu=4096)
    assert ep.make_cc_profile("nscc", mode="mrc", mtu=4096) == cc_pid  # asked alike: one shared profile
    qps = _connected_qps(ep, 2, QpAttr(cc_profile_id=cc_pid), ev_pid)
    assert all(q.cc.learn for q in qps)
    cfg = NsccConfig.for_network(30_000, 20, 4096)
    ep.ctl.modify_cc_profile(cc_pid, CcProfileAttr(cc_config=cfg), CcProfileAttrMask.CONFIG)
    ep.datagrams_to_send(0)
    assert all(q.cc.cfg == cfg and not q.cc.learn and not q.attr.cc_learn_base_rtt for q in qps)


def test_make_ev_profile_rejects_what_it_cannot_hold():
    ep = Endpoint(GID_A, [1, 2], encap="stev")
    with pytest.raises(ValueError, match="port 3"):
        ep.make_ev_profile([(0xC0000011, 3)])
    with pytest.raises(ValueError, match="4-byte stev"):
        ep.make_ev_profile([(b"\xc0\0\0\x11\x01", 1)])
    with pytest.raises(ValueError, match="need base_rtt"):
        ep.make_cc_profile("nscc", nscc={"max_cwnd": 1})
    srv6 = Endpoint(GID_A, [1], encap="srv6")
    seg = bytes(range(1, 33))  # carrier + SRH segment: kept whole (a 256-bit format)
    pid = srv6.make_ev_profile([(seg, 1)])
    assert srv6.ctl.ev_profile(pid).expanded(0) == seg


def _nscc_qp(ep: Endpoint, bound: bool, ev_pid: int, mtu: int, profile_mtu: int):
    """A connected MRC QP of ``ep`` over EV profile ``ev_pid`` with default NSCC: bound to the learning CC
    profile (asked for at ``profile_mtu``, as a caller may) or naming "nscc" per QP."""
    if bound:
        attr = QpAttr(mtu=mtu, ev_profile_id=ev_pid, cc_profile_id=ep.make_cc_profile("nscc", mtu=profile_mtu))
    else:
        attr = QpAttr(mtu=mtu, ev_profile_id=ev_pid, cc="nscc")
    qp = ep.create_qp(attr=attr)
    ep.connect(qp, 0x300 + qp.qpn, GID_B, 0, 0)
    return qp


def _nscc_trace(qp, events: list[tuple]) -> list[tuple]:
    """Feed ``events`` to the QP's CC; the window and every NSCC limit after each one."""
    cc = qp.cc
    out = [(cc.cwnd, repr(cc.cfg))]
    for ev in events:
        getattr(cc, ev[0])(*ev[1:])
        out.append((cc.cwnd, repr(cc.cfg)))
    return out


@pytest.mark.parametrize("ports,mtu,profile_mtu", [((1, 2), 8192, 8192), ((1,), 4096, 4096), ((1, 2), 8192, 4096)])
def test_learning_cc_profile_and_the_name_nscc_build_the_same_nscc_on_the_same_events(ports, mtu, profile_mtu):
    """Issue 11: a QP bound to make_cc_profile("nscc") (vendor_cfg: learn the base RTT) and one naming "nscc"
    are the same NSCC, window and limits, from RTS on: also when the QP's EVs use fewer of the endpoint's
    ports than the profile's line rate counts, or the profile was asked for at another MTU (both used to
    start the bound QP at the guess's window for the whole endpoint: 2x the named one on one of 2 ports)."""
    rng = random.Random(11)
    events: list[tuple] = []
    t = 0
    for _ in range(600):  # ACKs with RTT samples around a ms-scale base, ECN echoes, trims, losses, timeouts
        t += rng.randrange(1_000, 200_000)
        r = rng.random()
        if r < 0.08:
            events.append(("on_trim", t))
        elif r < 0.11:
            events.append(("on_loss", t))
        elif r < 0.12:
            events.append(("on_timeout", t))
        else:
            rtt = None if rng.random() < 0.1 else 2_000_000 + rng.randrange(0, 3_000_000)
            events.append(("on_ack", t, mtu * rng.randrange(0, 4), rtt, rng.random() < 0.2))
    traces = []
    for bound in (False, True):
        ep = Endpoint(GID_A, [1, 2], encap="srv6", port_rate_bps=10e9)
        ev_pid = ep.make_ev_profile(direct_evs("srv6", list(ports), 2, 0xA, 0xB), 1)
        qps = [_nscc_qp(ep, bound, ev_pid, mtu, profile_mtu) for _ in range(2)]  # two QPs: one shared profile
        assert all(q.cc.learn for q in qps) and (qps[0].attr.cc_profile_id is not None) == bound
        traces.append([_nscc_trace(q, events) for q in qps])
    named, bound_ = traces
    assert named[0] == named[1] and bound_[0] == bound_[1]  # QPs sharing a profile do not disturb each other
    assert bound_[0][0] == named[0][0]  # at RTS
    assert bound_[0] == named[0]  # and after every event
    assert named[0][-1][1] != named[0][0][1]  # the run learnt a base RTT (the limits moved)


def test_learning_cc_profile_and_the_name_nscc_run_the_same_transfer_in_the_simulator():
    """The same through the whole transport: two QPs per side spraying 4 congested, reordering paths
    (trims, CE marks, RACK and timeouts), bound to the learning profile or naming "nscc": the same window
    after every event and the same counters."""
    def run(bound: bool) -> tuple:
        paths = [PathSpec(delay_ns=500_000, rate_bps=50e6, queue_bytes=200_000, trim_bytes=40_000,
                          ecn_bytes=20_000, reorder=0.05, reorder_ns=1_000_000) for _ in range(4)]
        a = Endpoint(GID_A, [1, 2], port_rate_bps=10e9)
        b = Endpoint(GID_B, [1, 2], port_rate_bps=10e9)
        base = QpAttr(mtu=8192, ack_timeout=12, reorder_min_ns=1_000_000, ack_delay_ns=50_000)

        def qps(ep: Endpoint, src: int, dst: int) -> list:
            pid = ep.make_ev_profile([(srv6_carrier(src, 0x100 + i, dst, dst + 0x10), 1 + i % 2) for i in range(4)])
            if bound:
                attr = dataclasses.replace(base, ev_profile_id=pid, cc_profile_id=ep.make_cc_profile("nscc", mtu=8192))
            else:
                attr = dataclasses.replace(base, ev_profile_id=pid, cc="nscc")
            return [ep.create_qp(attr=attr) for _ in range(2)]

        qa, qb = qps(a, 1, 2), qps(b, 2, 1)
        for x, y in zip(qa, qb, strict=True):
            a.connect(x, y.qpn, GID_B, 0, 0)
            b.connect(y, x.qpn, GID_A, 0, 0)
        mr = b.reg_mr(bytearray(1 << 20), 0x1000_0000)
        net = Network(a, b, paths, seed=3)
        net.connect_qps(qa[0], qb[0])
        for i in range(3):
            for q in qa:
                a.post_write(q, i, bytes(128 << 10), 0x1000_0000, mr.rkey)
        done: list = []
        trace: list = []

        def stop() -> bool:
            done.extend(a.poll_completions())
            b.poll_completions()
            trace.append(tuple((q.cc.cwnd, q.cc.cfg.base_rtt) for q in qa))
            return len(done) >= 6

        end = net.run(stop=stop)
        assert len(done) == 6 and all(c.status.name == "SUCCESS" for c in done)
        return end, trace, [q.counters for q in qa]

    named, bound_ = run(False), run(True)
    # the paths were congested (since quick adapt fires at the first loss after its first period, the
    # first QP sees a trim but no CE mark here; the second sees both)
    assert any(c.trims_received for c in named[2]) and any(c.ecn_echoes for c in named[2])
    assert bound_ == named
