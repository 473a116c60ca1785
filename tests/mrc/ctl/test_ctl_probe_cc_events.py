"""EV probes / PORT_STATUS_UPDATE over a simulated transport, CC profiles and NSCC config, event queue."""

from __future__ import annotations

import errno
import heapq
from dataclasses import dataclass, field, replace

import pytest

from mrc.ctl import (
    CC_ALGO_NSCC,
    AttrOpt,
    CcProfileAttr,
    CcProfileAttrMask,
    DeviceAttr,
    EpBatch,
    EpOpType,
    EpReq,
    EpResponder,
    EpWireRequest,
    EpWireResponse,
    Ev,
    EvEventCq,
    EvFmtMode,
    EvState,
    MrcCtlContext,
    MrcCtlError,
    NsccConfig,
    ProfileState,
)

S = ProfileState
C = CcProfileAttrMask


@dataclass
class SimNet:
    """A deterministic network: per-port one-way delay, dead ports, a real EpResponder at the far end."""

    delay_ns: dict[int, int]
    dead: set[int] = field(default_factory=set)
    service_ns: int = 700
    responder: EpResponder = field(default_factory=EpResponder)
    duplicate: bool = False
    clock: int = 1_000_000
    _q: list = field(default_factory=list)
    sent: list[EpWireRequest] = field(default_factory=list)

    def now_ns(self) -> int:
        return self.clock

    def send(self, request: EpWireRequest) -> None:
        self.sent.append(request)
        port = request.ev.port
        if port in self.dead:
            return
        arrive = self.clock + self.delay_ns[port]
        rsp = self.responder.respond(request, port, arrive, arrive + self.service_ns)
        back = arrive + self.service_ns + self.delay_ns[port]
        for k in range(2 if self.duplicate else 1):
            heapq.heappush(self._q, (back + k, len(self._q), replace(rsp, rx_port=port, rx_ns=back + k)))

    def wait(self, deadline_ns: int) -> list[EpWireResponse]:
        if self._q and self._q[0][0] <= deadline_ns:
            t, _, rsp = heapq.heappop(self._q)
            self.clock = max(self.clock, t)
            return [rsp]
        self.clock = max(self.clock, deadline_ns)
        return []


def probe(req_id: int, port: int, value: int = 0x12345678) -> EpReq:
    return EpReq(req_id, "fd00::1", "fd00::2", EvFmtMode.STEV, Ev.from_int(value, 4, port))


def test_probe_batch_rtt_with_service_time_subtracted() -> None:
    ctx = MrcCtlContext(DeviceAttr.for_ports(4))
    net = SimNet({1: 5_000, 2: 7_000, 3: 1_000, 4: 2_000})
    rsps = ctx.ep_batch_send_wait(net, 26, EpOpType.EV_PROBE, [probe(1, 1), probe(2, 2), probe(3, 3)], 2_000_000)
    assert [r.req_id for r in rsps] == [3, 1, 2]  # arrival order
    assert {r.req_id: (r.port, r.rtt, r.adj_svc_time) for r in rsps} == {
        1: (1, 10_000, True), 2: (2, 14_000, True), 3: (3, 2_000, True)}
    assert all(w.dscp == 26 for w in net.sent)


def test_probe_without_service_time_reports_raw_rtt() -> None:
    ctx = MrcCtlContext(DeviceAttr.for_ports(2))
    net = SimNet({1: 5_000, 2: 5_000}, responder=EpResponder(report_service_time=False))
    (r,) = ctx.ep_batch_send_wait(net, 0, EpOpType.EV_PROBE, [probe(9, 1)], 1_000_000)
    assert (r.rtt, r.adj_svc_time) == (10_700, False)


def test_probe_timeout_returns_partial_responses_in_error() -> None:
    ctx = MrcCtlContext(DeviceAttr.for_ports(4))
    net = SimNet({p: 1_000 for p in range(1, 5)}, dead={2})
    t0 = net.now_ns()
    with pytest.raises(MrcCtlError) as ei:
        ctx.ep_batch_send_wait(net, 0, EpOpType.EV_PROBE, [probe(1, 1), probe(2, 2)], 50_000)
    assert ei.value.errno == errno.ETIMEDOUT
    assert [r.req_id for r in ei.value.responses] == [1]
    assert net.now_ns() == t0 + 50_000  # waited exactly until the deadline


def test_duplicate_and_late_responses_are_stale() -> None:
    dev = DeviceAttr.for_ports(2)
    net = SimNet({1: 1_000, 2: 1_000}, duplicate=True)
    batch = EpBatch.start(dev, 0, EpOpType.EV_PROBE, [probe(1, 1)], 100_000, net.now_ns())
    net.send(batch.requests[0])
    for _ in range(2):
        for rsp in net.wait(batch.deadline_ns):
            batch.on_response(rsp)
    assert batch.done and len(batch.responses) == 1 and batch.stale == 1


@pytest.mark.parametrize(("kwargs", "why"), [
    ({"req_tc": 64}, "dscp"), ({"reqs": []}, "empty"), ({"reqs": [probe(1, 1), probe(1, 2)]}, "dup id"),
    ({"reqs": [probe(1, 9)]}, "port"), ({"reqs": [probe(70000, 1)]}, "req_id"), ({"timeout": 0}, "timeout"),
])
def test_batch_validation_einval(kwargs: dict, why: str) -> None:
    ctx = MrcCtlContext(DeviceAttr.for_ports(4))
    net = SimNet({p: 1 for p in range(1, 5)})
    with pytest.raises(MrcCtlError) as ei:
        ctx.ep_batch_send_wait(net, kwargs.get("req_tc", 0), EpOpType.EV_PROBE, kwargs.get("reqs", [probe(1, 1)]),
                               kwargs.get("timeout", 1000))
    assert ei.value.errno == errno.EINVAL, why
    assert net.sent == []


def test_gid_forms() -> None:
    r = EpReq(1, "10.0.0.1", bytes(16), EvFmtMode.SRV6, Ev(bytes(32), 1))
    assert r.sgid == bytes(10) + b"\xff\xff\x0a\x00\x00\x01"
    with pytest.raises(MrcCtlError):
        EpReq(1, "nonsense", bytes(16), EvFmtMode.SRV6, Ev(bytes(32), 1))


def test_port_status_update_reaches_peer() -> None:
    ctx = MrcCtlContext(DeviceAttr.for_ports(4))
    ctx.port_down(3)
    net = SimNet({p: 2_000 for p in range(1, 5)})
    req = replace(probe(5, 1), port_status=ctx.port_status_mask())
    (r,) = ctx.ep_batch_send_wait(net, 0, EpOpType.PORT_STATUS_UPDATE, [req], 1_000_000)
    assert r.req_id == 5 and r.rtt == 4_000
    assert net.responder.peer_port_status[req.sgid] == 0b10110
    bad = replace(probe(6, 1), port_status=1 << 9)
    with pytest.raises(MrcCtlError):
        ctx.ep_batch_send_wait(net, 0, EpOpType.PORT_STATUS_UPDATE, [bad], 1_000_000)


def test_probe_unsupported_without_cap() -> None:
    ctx = MrcCtlContext(DeviceAttr.for_ports(2, opt_attr=AttrOpt.EV_EVENT))
    with pytest.raises(MrcCtlError) as ei:
        ctx.ep_batch_send_wait(SimNet({1: 1, 2: 1}), 0, EpOpType.EV_PROBE, [probe(1, 1)], 1000)
    assert ei.value.errno == errno.EOPNOTSUPP


# ---------------------------------------------------------------- event queue
def test_event_queue_imprecise_drop_count_is_a_flag() -> None:
    cq = EvEventCq(1, precise_drop_count=False)
    ev = Ev.from_int(1, 4, 1)
    assert cq.push(1, ev, EvState.GOOD)
    for _ in range(5):
        assert not cq.push(1, ev, EvState.ASSUMED_BAD)
    assert cq.poll(4)[0].drop_count == 0
    cq.push(1, ev, EvState.GOOD)
    assert cq.poll(4)[0].drop_count == 1 and cq.total_dropped == 5
    with pytest.raises(MrcCtlError):
        EvEventCq(0)


def test_event_queue_never_exceeds_capacity() -> None:
    cq = EvEventCq(8)
    for i in range(1000):
        cq.push(1, Ev.from_int(i, 4, 1), EvState.GOOD)
        assert len(cq) <= 8
    assert cq.total_delivered == 8 and cq.total_dropped == 992
    assert len(cq.poll(3)) == 3 and len(cq) == 5


# ---------------------------------------------------------------- CC profiles and NSCC
def test_nscc_defaults_follow_the_protocol_derivations() -> None:
    cfg = NsccConfig.for_network(base_rtt_ns=12_000, link_gbps=100, mtu=4096)
    bdp = 100 * 12_000 // 8
    assert cfg.target_delay == 9_000 and cfg.adjust_period_threshold == 12_000
    assert cfg.adjust_bytes_threshold == 8 * 4096 and cfg.max_cwnd == 3 * bdp // 2
    assert (cfg.gamma, cfg.max_md_jump, cfg.qa_gate) == (0.8, 0.5, 3)
    assert cfg == NsccConfig()  # the dataclass defaults are this reference network
    fast = NsccConfig.for_network(base_rtt_ns=12_000, link_gbps=400, mtu=4096, trimming=False)
    assert fast.target_delay == 12_000 and fast.eta == pytest.approx(cfg.eta * 4)
    assert fast.fi == pytest.approx(cfg.fi * 4) and fast.max_cwnd == 4 * cfg.max_cwnd


@pytest.mark.parametrize(("rtt", "gbps", "mtu", "trim"), [(12_000, 100, 4096, True), (8_000, 800, 4096, False),
                                                          (5_000, 25, 1024, True)])
def test_nscc_config_converts_to_the_core_algorithm(rtt: int, gbps: int, mtu: int, trim: bool) -> None:
    import dataclasses

    from mrc.core import nscc
    ours = NsccConfig.for_network(rtt, gbps, mtu, trimming=trim)
    core = nscc.NsccConfig(**dataclasses.asdict(ours))  # same 13 fields, same units
    assert core == nscc.NsccConfig.defaults(rtt, gbps * 1e9, mtu, trimming=trim)


@pytest.mark.parametrize("change", [{"gamma": 0.0}, {"max_md_jump": 1.5}, {"base_rtt": 0}, {"qa_gate": 40},
                                    {"eta": -1.0}, {"nonsense": 1}, {"qa_gate": 2.5}, {"qa_gate": True},
                                    {"eta": float("nan")}, {"fi": float("inf")}, {"fi_scale": float("nan")},
                                    {"disable_qa": 1}])
def test_nscc_bad_parameters(change: dict) -> None:
    with pytest.raises(ValueError):  # the core's config type: ValueError, as QpAttr.validate
        NsccConfig().replace(**change)
    if "nonsense" in change:
        return
    bad = NsccConfig(**change)  # the constructor does not validate; the CC profile does, with EINVAL
    ctx = MrcCtlContext()
    with pytest.raises(MrcCtlError) as ei:
        ctx.modify_cc_profile(1, CcProfileAttr(profile_state=S.OFFLINE, algorithm=CC_ALGO_NSCC, cc_config=bad),
                              C.STATE | C.ALGORITHM | C.CONFIG)
    assert ei.value.errno == errno.EINVAL


def test_cc_profile_state_machine() -> None:
    ctx = MrcCtlContext()
    assert ctx.query_device().cc.algorithms == (CC_ALGO_NSCC,)
    with pytest.raises(MrcCtlError):  # INIT -> OFFLINE needs ALGORITHM
        ctx.modify_cc_profile(1, CcProfileAttr(profile_state=S.OFFLINE), C.STATE)
    with pytest.raises(MrcCtlError):
        ctx.modify_cc_profile(1, CcProfileAttr(profile_state=S.OFFLINE, algorithm="cubic"), C.STATE | C.ALGORITHM)
    ctx.modify_cc_profile(1, CcProfileAttr(profile_state=S.OFFLINE, algorithm=CC_ALGO_NSCC), C.STATE | C.ALGORITHM)
    with pytest.raises(MrcCtlError):  # ONLINE needs CONFIG
        ctx.modify_cc_profile(1, CcProfileAttr(profile_state=S.ONLINE), C.STATE)
    with pytest.raises(MrcCtlError):  # wrong config type
        ctx.modify_cc_profile(1, CcProfileAttr(cc_config={"gamma": 1}), C.CONFIG)
    cfg = NsccConfig.for_network(10_000, 400)
    ctx.modify_cc_profile(1, CcProfileAttr(profile_state=S.ONLINE, cc_config=cfg), C.STATE | C.CONFIG)
    q = ctx.query_cc_profile(1, C.STATE | C.ALGORITHM | C.CONFIG)
    assert (q.cur_profile_state, q.algorithm, q.cc_config) == (S.ONLINE, CC_ALGO_NSCC, cfg)
    with pytest.raises(MrcCtlError) as ei:  # CONFIG while ONLINE needs the cap
        ctx.modify_cc_profile(1, CcProfileAttr(cc_config=cfg), C.CONFIG)
    assert ei.value.errno == errno.EINVAL


def test_cc_profile_busy_and_online_config_cap() -> None:
    dev = DeviceAttr.for_ports(2)
    dev.opt_attr |= AttrOpt.CC_PROFILE_MODIFY_ONLINE
    ctx = MrcCtlContext(dev)
    cfg = NsccConfig()
    ctx.modify_cc_profile(2, CcProfileAttr(profile_state=S.OFFLINE, algorithm=CC_ALGO_NSCC, cc_config=cfg),
                          C.STATE | C.ALGORITHM | C.CONFIG)
    ctx.modify_cc_profile(2, CcProfileAttr(profile_state=S.ONLINE), C.STATE)
    ctx.modify_cc_profile(2, CcProfileAttr(cc_config=cfg.replace(gamma=0.5)), C.CONFIG)
    # an AUTO EV profile is enough to attach a QP
    from mrc.ctl import EvMode, EvProfileAttr
    from mrc.ctl import EvProfileAttrMask as M
    ctx.modify_ev_profile(0, EvProfileAttr(profile_state=S.OFFLINE, ev_mode=EvMode.AUTO, ev_min_active=0,
                                           ev_event_mask=EvState.NONE), M.STATE | M.MODE | M.MIN_ACTIVE
                          | M.EVENT_MASK)
    ctx.modify_ev_profile(0, EvProfileAttr(profile_state=S.ONLINE), M.STATE)
    ctx.attach_qp(7, 0, 2)
    with pytest.raises(MrcCtlError) as ei:
        ctx.modify_cc_profile(2, CcProfileAttr(profile_state=S.OFFLINE), C.STATE)
    assert ei.value.errno == errno.EBUSY
    ctx.detach_qp(7)
    ctx.modify_cc_profile(2, CcProfileAttr(profile_state=S.OFFLINE), C.STATE)
    ctx.modify_cc_profile(2, CcProfileAttr(profile_state=S.INIT), C.STATE)
    assert ctx.query_cc_profile(2, C.ALGORITHM).algorithm is None


def test_port_admin_and_version() -> None:
    from mrc.ctl import PortAdminState, PortAttr
    ctx = MrcCtlContext(DeviceAttr.for_ports(2))
    assert ctx.query_port(1).port_admin_state == PortAdminState.ENABLED
    ctx.modify_port(2, PortAttr(PortAdminState.DISABLED))
    assert not ctx.port_is_up(2) and ctx.port_status_mask() == 0b10
    with pytest.raises(MrcCtlError):
        ctx.query_port(3)
    cur, last, _, _ = ctx.query_version()
    assert cur >= last
