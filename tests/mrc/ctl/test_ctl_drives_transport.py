"""mrc_ctl drives the transport: QPs bind to ctl profiles by id; state, floor and events are per profile.

Two sans-IO endpoints over the deterministic simulated network (mrc.sim): ``a`` has two QPs bound to
one STEV EV profile made through ``a.ctl``; ``b`` answers with private EV lists.
"""

from __future__ import annotations

import errno

import pytest
from ctl_builders import make_fmt

from mrc.core import Endpoint, EvState, QpAttr, WcStatus
from mrc.ctl import (
    AttrOpt,
    Ev,
    EvField,
    EvFieldsOp,
    EvFieldsOpArgs,
    EvFmtMode,
    EvMode,
    EvOp,
    EvOpArgs,
    EvOpEntry,
    EvProfileAttr,
    EvProfileAttrMask,
    MrcCtlError,
    ProfileState,
    api_ver,
    entries_for,
)
from mrc.ctl.context import MrcCtlContext
from mrc.sim import PathSpec
from mrc.sim.network import Network
from mrc.sim.scenario import GID_A, GID_B

M = EvProfileAttrMask
PROFILE = 5
CC_PROFILE = 2
N = 4  # EVs = paths = NIC ports
# STEV EV i: UDP source port 0xC000+i, flow label low 16 bits 0x0100+i, on port i+1 (path i)
STEV = [((0xC000 + i) << 16) | (0x0100 + i) for i in range(N)]


def _online_profile(ctx: MrcCtlContext, min_active: int = 1) -> None:
    """EXP STEV profile PROFILE over format profile 1 (16 + 16 bits), EV i on port i + 1."""
    make_fmt(ctx, 1, EvFmtMode.STEV, [16, 16])
    fields = [EvField(16, mask=0xFFFF), EvField(16, mask=0xFFFF)]
    ctx.modify_ev_profile(PROFILE, EvProfileAttr(
        profile_state=ProfileState.OFFLINE, ev_mode=EvMode.EXP, ev_fmt_profile_id=1, ev_count=N,
        ev_min_active=min_active, ev_event_mask=EvState.GOOD | EvState.ASSUMED_BAD,
        ev_fields_op=EvFieldsOpArgs(EvFieldsOp.MODIFY_FIELDS, fields)),
        M.STATE | M.MODE | M.FMT_ID | M.COUNT | M.MIN_ACTIVE | M.EVENT_MASK | M.EV_FIELDS_OP)
    evs = [Ev.from_int(v, 4, i + 1) for i, v in enumerate(STEV)]
    ctx.modify_ev_profile(PROFILE, EvProfileAttr(ev_op=EvOpArgs(EvOp.REPLACE_EV, entries_for(evs))), M.EV_OP)
    ctx.modify_ev_profile(PROFILE, EvProfileAttr(profile_state=ProfileState.ONLINE), M.STATE)


class Setup:
    """a: two QPs on EV profile PROFILE; b: one QP per a-QP with private mirror EVs; N paths."""

    def __init__(self, paths: list[PathSpec] | None = None, *, mode: str = "mrc", cc: object = None) -> None:
        """``mode``: both sides' QP mode; ``cc``: an NsccConfig for a CC profile (CC_PROFILE) a's QPs bind to."""
        ports = list(range(1, N + 1))
        self.a = Endpoint(GID_A, ports, encap="stev")
        self.b = Endpoint(GID_B, ports, encap="stev")
        _online_profile(self.a.ctl)
        cc_id = None
        if cc is not None:
            from mrc.ctl import CC_ALGO_NSCC, CcProfileAttr, CcProfileAttrMask

            C = CcProfileAttrMask
            self.a.ctl.modify_cc_profile(CC_PROFILE, CcProfileAttr(
                profile_state=ProfileState.OFFLINE, algorithm=CC_ALGO_NSCC, cc_config=cc),
                C.STATE | C.ALGORITHM | C.CONFIG)
            self.a.ctl.modify_cc_profile(CC_PROFILE, CcProfileAttr(profile_state=ProfileState.ONLINE), C.STATE)
            cc_id = CC_PROFILE
        self.cq = self.a.ctl.create_ev_event_cq(64)
        self.qa = [self.a.create_qp(attr=QpAttr(mode=mode, ev_profile_id=PROFILE, cc_profile_id=cc_id))
                   for _ in range(2)]
        self.qb = [self.b.create_qp([(v, i + 1) for i, v in enumerate(STEV)], QpAttr(mode=mode)) for _ in range(2)]
        self.net = Network(self.a, self.b, paths or [PathSpec() for _ in range(N)])
        self.mr = self.b.reg_mr(bytearray(1 << 21), 0x10000)
        for qa, qb in zip(self.qa, self.qb, strict=True):
            self.a.connect(qa, qb.qpn, GID_B, rq_psn=0, sq_psn=0)
            self.b.connect(qb, qa.qpn, GID_A, rq_psn=0, sq_psn=0)
            self.net.connect_qps(qa, qb)
        self.done: list = []
        self.wr = 0

    def sent_on(self, path: int) -> int:
        """Frames a has put on ``path`` so far (data and probes; a is the requester)."""
        return self.net.links[(0, path)].stats.sent

    def write(self, qps: list[int], size: int = 64 * 4096, run: bool = True) -> None:
        """Post one ``size`` write on each a-QP in ``qps``; with ``run``, run until they complete."""
        want = len(self.done) + len(qps)
        for k in qps:
            self.wr += 1
            self.a.post_write(self.qa[k], self.wr, bytes(size), self.mr.base_va, self.mr.rkey)
        if run:
            self.run_until(want)

    def run_until(self, want: int) -> None:
        def stop() -> bool:
            self.done.extend(self.a.poll_completions())
            self.b.poll_completions()
            return len(self.done) >= want

        self.net.run(stop=stop, until_ns=self.net.now + 2_000_000_000)
        assert len(self.done) >= want and all(c.status is WcStatus.SUCCESS for c in self.done)


def _set_state(ctx: MrcCtlContext, value: int, port: int, state: EvState) -> None:
    entry = EvOpEntry(ev=Ev.from_int(value, 4, port), state=state)
    ctx.modify_ev_profile(PROFILE, EvProfileAttr(ev_op=EvOpArgs(EvOp.MODIFY_EV_STATE, [entry])), M.EV_OP)


def test_two_qps_share_the_profile_deny_reaches_both_and_one_event_names_the_profile() -> None:
    s = Setup()
    s.write([0, 1])
    assert all(s.sent_on(i) > 0 for i in range(N))  # both QPs spray over all four EVs
    assert s.qa[0].evset.prof is s.qa[1].evset.prof is s.a.ctl.ev_profile(PROFILE)
    assert s.a.ctl.query_ev_profile(PROFILE, M.STATE).cur_profile_state == ProfileState.ONLINE

    # deny EV 2 at run time, in the middle of a transfer on both QPs: from the next packet on,
    # neither QP sends on it (its path carries nothing more from a)
    s.write([0, 1], size=256 * 4096, run=False)
    s.net.run(until_ns=s.net.now + 20_000)
    assert 0 < s.qa[0].counters.data_packets_sent and s.qa[1].snd_nxt < s.qa[1].next_assign  # mid-transfer
    _set_state(s.a.ctl, STEV[2], 3, EvState.DENIED)
    before = [s.sent_on(i) for i in range(N)]
    s.run_until(4)
    s.write([0], size=128 * 4096)
    s.write([1], size=128 * 4096)
    after = [s.sent_on(i) for i in range(N)]
    assert after[2] == before[2], f"a sent {after[2] - before[2]} frames on the DENIED EV"
    assert all(after[i] > before[i] for i in (0, 1, 3))
    assert s.a.ev_states(s.qa[0])[2] is EvState.DENIED and s.a.ev_states(s.qa[1])[2] is EvState.DENIED
    assert s.a.poll_events() == [] and s.cq.poll(8) == []  # DENIED is not an event (mrc_ctl.h)

    # path 1 dies while both QPs send on EV 1: one transition of the profile, so one event naming
    # profile and EV, however many QPs saw the loss
    s.net.paths[1].down = [(s.net.now, None)]
    s.write([0, 1], size=128 * 4096)
    events = s.cq.poll(64)
    assert [(e.profile_id, e.ev, e.state) for e in events] == [(PROFILE, Ev.from_int(STEV[1], 4, 2),
                                                                 EvState.ASSUMED_BAD)]
    assert events[0].qpn in (s.qa[0].qpn, s.qa[1].qpn) and events[0].cause in ("rack", "timeout")
    core = [e for e in s.a.poll_events() if e.state is EvState.ASSUMED_BAD]
    assert [(e.profile_id, e.ev_index) for e in core] == [(PROFILE, 1)]

    # the controller lifts the deny: both QPs use EV 2 again
    _set_state(s.a.ctl, STEV[2], 3, EvState.GOOD)
    mark = s.sent_on(2)
    s.write([0])
    s.write([1])
    assert s.sent_on(2) > mark
    assert [(e.profile_id, e.ev_index, e.state, e.cause) for e in s.a.poll_events()] == \
        [(PROFILE, 2, EvState.GOOD, "controller")]


def test_replace_ev_on_an_online_profile_moves_every_bound_qp() -> None:
    s = Setup()
    s.write([0, 1])
    new = ((0xD000) << 16) | 0x0777  # a new EV for slot 3, same port 4
    s.net.routes[0][(4, (0x0777).to_bytes(2, "big") + (0xD000).to_bytes(2, "big"))] = 3
    entry = EvOpEntry(ev=Ev.from_int(STEV[3], 4, 4), ev_new=Ev.from_int(new, 4, 4), state=EvState.GOOD)
    s.a.ctl.modify_ev_profile(PROFILE, EvProfileAttr(ev_op=EvOpArgs(EvOp.REPLACE_EV, [entry])), M.EV_OP)
    unrouted, mark = s.net.unrouted, s.sent_on(3)
    s.write([0])
    s.write([1])
    assert s.net.unrouted == unrouted  # no frame went out with the old EV
    assert s.sent_on(3) > mark
    for qp in s.qa:
        assert (qp.evset.entries[3].encap.sport, qp.evset.entries[3].encap.flow_label) == (0xD000, 0x0777)


def test_replace_ev_onto_another_port_moves_the_qps_port_set() -> None:
    """A REPLACE_EV may put an EV on another NIC port: every bound QP's EvSet.ports (what pick checks
    before walking its EVs) follows, and the QPs go on sending."""
    s = Setup()
    s.write([0, 1])
    new = ((0xD001) << 16) | 0x0778  # slot 3 (port 4) -> port 1, path 0
    s.net.routes[0][(1, (0x0778).to_bytes(2, "big") + (0xD001).to_bytes(2, "big"))] = 0
    entry = EvOpEntry(ev=Ev.from_int(STEV[3], 4, 4), ev_new=Ev.from_int(new, 4, 1), state=EvState.GOOD)
    s.a.ctl.modify_ev_profile(PROFILE, EvProfileAttr(ev_op=EvOpArgs(EvOp.REPLACE_EV, [entry])), M.EV_OP)
    unrouted = s.net.unrouted
    s.write([0, 1])
    assert s.net.unrouted == unrouted
    for qp in s.qa:
        assert qp.evset.entries[3].port == 1 and qp.evset.ports == (1, 2, 3)


def test_a_replaced_ev_is_a_new_path_to_every_bound_qp() -> None:
    """REPLACE_EV moves a slot onto another path: the QP's record of the old path (RACK's latest delivered
    send, delivery times, suspicion) is not the new one's.  The controller moves slot 3 off a path that
    has just died: the packets lost with it are resent, and the new path's first deliveries do not make
    the new, healthy EV ASSUMED_BAD -- they did (RACK's FIFO rule: "a later packet on this EV arrived")."""
    s = Setup([PathSpec() for _ in range(N + 1)])  # path N: where the new EV of slot 3 goes
    s.write([0, 1])
    s.a.poll_events()
    s.write([0], size=512 * 4096, run=False)
    s.net.run(until_ns=s.net.now + 20_000)
    s.net.paths[3].down = [(s.net.now, None)]
    s.net.run(until_ns=s.net.now + 1_000)
    lost_on_old = s.net.links[(0, 3)].stats.dropped_down
    new = (0xD000 << 16) | 0x0777
    s.net.routes[0][(4, (0x0777).to_bytes(2, "big") + (0xD000).to_bytes(2, "big"))] = N
    entry = EvOpEntry(ev=Ev.from_int(STEV[3], 4, 4), ev_new=Ev.from_int(new, 4, 4), state=EvState.GOOD)
    s.a.ctl.modify_ev_profile(PROFILE, EvProfileAttr(ev_op=EvOpArgs(EvOp.REPLACE_EV, [entry])), M.EV_OP)
    s.run_until(len(s.done) + 1)
    assert lost_on_old > 0 and s.net.links[(0, N)].stats.delivered > 0
    assert [(e.ev_index, e.state, e.cause) for e in s.a.poll_events()] == []
    assert s.qa[0].evset.entries[3].srtt > 0  # learnt again, on the new path


def test_congestion_echoes_of_copies_sent_on_the_replaced_ev_do_not_charge_the_new_one() -> None:
    """The copies a slot carried before a REPLACE_EV count neither for nor against its new EV: an ECN
    echo or a trim that comes back for one of them is the old path's queue, not the new path's.  The
    old path (slot 3) marks every packet; the new one marks none, so every congestion signal charged to
    slot 3 after the replacement is an old copy's (here: of packets resent on the new EV, whose first,
    marked copy crossed the old path; an echo names a PSN, not a copy).  They were charged to it (a
    penalty and a signal time on the new EV: skipped once by the spray, a proven loss excused for an RTT;
    review h-rev5)."""
    paths = [PathSpec() for _ in range(N + 1)]
    paths[3] = PathSpec(ecn_bytes=0, rate_bps=30e9)  # a queue builds: CE-marks behind the first packet
    s = Setup(paths)
    qp = s.qa[0]
    s.write([0], size=256 * 4096, run=False)
    s.net.run(until_ns=s.net.now + 15_000)  # copies on slot 3 in flight, their echoes on the way
    sent_old = s.sent_on(3)
    new = (0xD000 << 16) | 0x0777
    s.net.routes[0][(4, (0x0777).to_bytes(2, "big") + (0xD000).to_bytes(2, "big"))] = N
    entry = EvOpEntry(ev=Ev.from_int(STEV[3], 4, 4), ev_new=Ev.from_int(new, 4, 4), state=EvState.GOOD)
    s.a.ctl.modify_ev_profile(PROFILE, EvProfileAttr(ev_op=EvOpArgs(EvOp.REPLACE_EV, [entry])), M.EV_OP)
    echoes = qp.counters.ecn_echoes
    s.run_until(len(s.done) + 1)
    assert sent_old > 0 and s.net.links[(0, N)].stats.delivered > 0
    assert qp.counters.ecn_echoes > echoes  # the old copies' echoes did come back after the replacement
    assert qp.evset.entries[3].signal_ns < 0  # no congestion signal on the new EV


def test_replace_ev_reaches_a_qp_that_only_receives() -> None:
    """The receiving side of a REPLACE_EV: a QP that only answers (ACKs from data arrivals, no
    data of its own, so no fill) takes the new EV before its next ACK too; it used to ACK on the
    replaced EV for the whole transfer (its timers never ran the check)."""
    from mrc.sim.scenario import make_pair, transfer
    from mrc.wire.codec import decode_frame

    p = make_pair([PathSpec(), PathSpec()], mode="mrc", encap="srv6", attr=QpAttr(mode="mrc", ack_every=1))
    prof = p.b.ctl.ev_profile(p.qb.attr.ev_profile_id)
    old = prof.evs[0]
    new = Ev(old.val[:6] + b"\x01\xff" + old.val[8:16], old.port)  # slot 0, another spine uSID
    p.b.ctl.modify_ev_profile(prof.profile_id, EvProfileAttr(ev_op=EvOpArgs(EvOp.REPLACE_EV, [
        EvOpEntry(ev=old, ev_new=new, state=EvState.GOOD)])), M.EV_OP)
    carriers: list[bytes] = []
    send = p.b.datagrams_to_send

    def spy(now_ns: int) -> list:
        out = send(now_ns)
        carriers.extend(bytes(decode_frame(f).outer_dst) for _, f in out)
        return out

    p.b.datagrams_to_send = spy
    transfer(p, [(i, bytes(16 << 10), p.mr.base_va, None) for i in range(8)])
    assert len(p.done) == 8
    assert old.val[:16] not in carriers and new.val[:16] in carriers


def test_ev_min_active_is_the_profiles_floor() -> None:
    s = Setup()
    prof = s.a.ctl.ev_profile(PROFILE)
    assert s.qa[0].evset.min_active == prof.ev_min_active == 1
    for i in range(N - 1):  # QP 0 retires three EVs, QP 1 tries the last one: the floor holds it
        assert s.qa[0].evset.mark_bad(i, 0, "test")
    assert not s.qa[1].evset.mark_bad(N - 1, 0, "test")
    assert prof.good_count() == 1 and s.qa[1].evset.holds == 1


def test_unpolled_profile_events_stay_bounded() -> None:
    """An ONLINE profile whose transitions nobody polls keeps at most EV_EVENT_BACKLOG of them, the
    newest, and counts the rest (mrc.core.types.keep_event)."""
    from mrc.core.types import EV_EVENT_BACKLOG

    ctx = MrcCtlContext()
    _online_profile(ctx, min_active=0)
    prof = ctx.ev_profile(PROFILE)
    flips = 2 * EV_EVENT_BACKLOG + 5
    for t in range(flips):
        assert prof.endpoint_set_state(1, EvState.ASSUMED_BAD if t % 2 == 0 else EvState.GOOD, now_ns=t, qpn=7)
    assert len(prof.events) <= EV_EVENT_BACKLOG and prof.events_dropped + len(prof.events) == flips
    assert prof.events[-1].time_ns == flips - 1 and prof.events[0].drop_count > 0


def test_bound_profile_cannot_go_offline_and_bad_bindings_are_refused() -> None:
    s = Setup()
    with pytest.raises(MrcCtlError) as ei:
        s.a.ctl.modify_ev_profile(PROFILE, EvProfileAttr(profile_state=ProfileState.OFFLINE), M.STATE)
    assert ei.value.errno == errno.EBUSY
    with pytest.raises(ValueError, match="not ONLINE"):
        s.a.create_qp(attr=QpAttr(ev_profile_id=PROFILE + 1))
    with pytest.raises(ValueError, match="either EVs or"):
        s.a.create_qp([(1, 1)], QpAttr(ev_profile_id=PROFILE))
    srv6 = Endpoint(GID_A, [1, 2, 3, 4], encap="srv6", ctl=s.a.ctl)
    with pytest.raises(ValueError, match="is STEV but this endpoint sends srv6"):
        srv6.create_qp(attr=QpAttr(ev_profile_id=PROFILE))


def test_ctl_evs_given_to_create_qp_are_wire_values() -> None:
    ep = Endpoint(GID_A, [1, 2], encap="stev")
    qp = ep.create_qp([Ev.from_int(0xC0010203, 4, 1), Ev.from_int(0xC0040506, 4, 2)])
    ep.connect(qp, 0x200, GID_B, 0, 0)
    assert [(e.encap.sport, e.encap.flow_label) for e in qp.evset.entries] == [(0xC001, 0x0203), (0xC004, 0x0506)]
    arr = [EvOpEntry(ev=Ev.from_int(0xC007, 2, 2), state=EvState.GOOD)]  # QUERY_EV_ARRAY entries work too
    udp = Endpoint(GID_A, [1, 2], encap="udp")
    q2 = udp.create_qp(arr)
    udp.connect(q2, 0x200, GID_B, 0, 0)
    assert q2.evset.entries[0].encap.sport == 0xC007


def test_query_version_is_the_headers_encoding() -> None:
    # mrc_ctl_api_ver.h: MRC_CTL_API_VER(major, minor, sub) = major << 24 | minor << 16 | sub;
    # current 1.0.1, last supported 0.0.0, vendor current 1.0.0, vendor last supported 0.0.0
    assert api_ver(1, 0, 1) == 0x1000001 and api_ver(0xFF, 0xFF, 0xFFFF) == 0xFFFFFFFF
    assert MrcCtlContext.query_version() == (0x1000001, 0, 0x1000000, 0)
    with pytest.raises(MrcCtlError):
        api_ver(1, 0, 1 << 16)


def test_vendor_cfg_is_bounded_by_the_header() -> None:
    from mrc.ctl import (
        MAX_VENDOR_CFG_SIZE,
        CcProfileAttr,
        CcProfileAttrMask,
        EvFmtProfileAttr,
        EvFmtProfileAttrMask,
    )

    ctx = MrcCtlContext()
    big, ok = bytes(MAX_VENDOR_CFG_SIZE + 1), bytes(range(MAX_VENDOR_CFG_SIZE))
    C = CcProfileAttrMask
    for cfg, want in ((big, errno.EINVAL), ("text", errno.EINVAL)):
        with pytest.raises(MrcCtlError) as ei:
            ctx.modify_cc_profile(1, CcProfileAttr(profile_state=ProfileState.OFFLINE, algorithm=None,
                                                   vendor_cfg=cfg), C.STATE | C.ALGORITHM | C.VENDOR_CFG)
        assert ei.value.errno == want
    assert ctx.query_cc_profile(1, C.STATE).cur_profile_state == ProfileState.INIT  # nothing changed
    ctx.modify_cc_profile(1, CcProfileAttr(profile_state=ProfileState.OFFLINE, algorithm=None, vendor_cfg=ok),
                          C.STATE | C.ALGORITHM | C.VENDOR_CFG)
    assert ctx.query_cc_profile(1, C.VENDOR_CFG).vendor_cfg == ok
    F = EvFmtProfileAttrMask
    with pytest.raises(MrcCtlError):
        ctx.modify_ev_fmt_profile(2, EvFmtProfileAttr(profile_state=ProfileState.OFFLINE, ev_fmt_mode=EvFmtMode.UDP,
                                                      vendor_cfg=big), F.STATE | F.MODE | F.VENDOR_CFG)
    with pytest.raises(MrcCtlError):
        ctx.modify_ev_profile(3, EvProfileAttr(profile_state=ProfileState.OFFLINE, ev_mode=EvMode.AUTO,
                                               vendor_cfg=big), M.STATE | M.MODE | M.VENDOR_CFG)


def test_port_masks_api_bit_n_wire_bit_n_minus_1() -> None:
    from mrc.ctl import DeviceAttr, EpBatch, EpOpType, EpReq, api_port_mask, wire_port_mask

    assert wire_port_mask(0b1_0110) == 0b1011 and api_port_mask(0b1011) == 0b1_0110
    with pytest.raises(MrcCtlError):
        wire_port_mask(0b1)  # bit 0 names no port
    req = EpReq(1, "fd00::1", "fd00::2", EvFmtMode.STEV, Ev.from_int(1, 4, 1), port_status=0b110)  # ports 1, 2
    batch = EpBatch.start(DeviceAttr.for_ports(2), 0, EpOpType.PORT_STATUS_UPDATE, [req], 1000, 0)
    assert batch.requests[0].port_status == 0b11  # on the wire: bit 0 = port 1, bit 1 = port 2


def test_cc_profile_binding_gives_the_qp_its_nscc_config() -> None:
    from mrc.core import NsccConfig
    from mrc.ctl import CC_ALGO_NSCC, CcProfileAttr, CcProfileAttrMask

    ep = Endpoint(GID_A, list(range(1, N + 1)), encap="stev")
    _online_profile(ep.ctl)
    C = CcProfileAttrMask
    cfg = NsccConfig.for_network(8_000, 100)
    ep.ctl.modify_cc_profile(2, CcProfileAttr(profile_state=ProfileState.OFFLINE, algorithm=CC_ALGO_NSCC,
                                              cc_config=cfg), C.STATE | C.ALGORITHM | C.CONFIG)
    with pytest.raises(ValueError, match="not ONLINE"):
        ep.create_qp(attr=QpAttr(ev_profile_id=PROFILE, cc_profile_id=2))
    ep.ctl.modify_cc_profile(2, CcProfileAttr(profile_state=ProfileState.ONLINE), C.STATE)
    qp = ep.create_qp(attr=QpAttr(ev_profile_id=PROFILE, cc_profile_id=2))
    ep.connect(qp, 0x200, GID_B, 0, 0)
    assert qp.attr.cc == cfg and qp.cc is not None and qp.cc.cfg == cfg
    with pytest.raises(MrcCtlError) as ei:  # bound: the CC profile cannot leave ONLINE
        ep.ctl.modify_cc_profile(2, CcProfileAttr(profile_state=ProfileState.OFFLINE), C.STATE)
    assert ei.value.errno == errno.EBUSY


def test_a_cc_profile_change_reaches_every_bound_qp_within_one_rtt() -> None:
    from mrc.core import NsccConfig
    from mrc.ctl import CcProfileAttr, CcProfileAttrMask

    cfg = NsccConfig.for_network(8_000, 100)
    s = Setup(cc=cfg)
    assert s.a.ctl.query_device().opt_attr & AttrOpt.CC_PROFILE_MODIFY_ONLINE
    s.write([0, 1])
    assert all(qp.cc.cfg == cfg for qp in s.qa)
    peak_before = _peak_inflight(s, [0, 1])
    assert peak_before > 4 * 4096  # the first config lets more than 4 packets fly: the check below can fail

    # a new config on the ONLINE profile, mid-transfer on both QPs
    small = cfg.replace(max_cwnd=4 * 4096)
    s.write([0, 1], size=256 * 4096, run=False)
    s.net.run(until_ns=s.net.now + 20_000)
    assert all(qp.snd_nxt < qp.next_assign for qp in s.qa)  # both still sending
    s.a.ctl.modify_cc_profile(CC_PROFILE, CcProfileAttr(cc_config=small), CcProfileAttrMask.CONFIG)
    rtt = max(qp.srtt for qp in s.qa)
    s.net.run(until_ns=s.net.now + rtt)  # one RTT later both QPs run on it
    for qp in s.qa:
        assert qp.cc.cfg == small and qp.attr.cc == small and qp.cc.window() <= small.max_cwnd
    s.run_until(6)
    assert _peak_inflight(s, [0, 1]) <= small.max_cwnd  # and the window holds from then on


def _peak_inflight(s: Setup, qps: list[int]) -> int:
    """Run one 64-packet write on each QP in ``qps`` in 1 us steps; the largest bytes in flight seen."""
    want = len(s.done) + len(qps)
    s.write(qps, run=False)
    peak = 0
    for _ in range(100_000):
        s.net.run(until_ns=s.net.now + 1_000)
        peak = max([peak] + [s.qa[k].inflight for k in qps])
        s.done.extend(s.a.poll_completions())
        s.b.poll_completions()
        if len(s.done) >= want:
            return peak
    raise AssertionError("the writes did not complete")


def test_an_rc_qp_moves_off_its_denied_ev_to_the_next_allowed_one() -> None:
    s = Setup(mode="rc")
    data = bytes(range(256)) * (64 * 16)  # 256 KiB, 64 packets
    s.a.post_write(s.qa[0], 1, data, s.mr.base_va, s.mr.rkey)
    s.run_until(1)
    assert [s.sent_on(i) > 0 for i in range(N)] == [True, False, False, False]  # RC: one path, slot 0

    # deny slot 0 while QP 0 sends: from its next packet on it uses slot 1 (and only slot 1)
    s.a.post_write(s.qa[0], 2, data, s.mr.base_va + len(data), s.mr.rkey)
    s.net.run(until_ns=s.net.now + 5_000)
    assert s.qa[0].snd_nxt < s.qa[0].next_assign  # mid-transfer
    _set_state(s.a.ctl, STEV[0], 1, EvState.DENIED)
    before = s.sent_on(0)
    s.run_until(2)
    assert s.sent_on(0) == before, "the RC QP sent on its DENIED EV"
    assert s.sent_on(1) > 0 and s.sent_on(2) == s.sent_on(3) == 0
    assert bytes(s.mr.buf[: 2 * len(data)]) == data + data  # nothing lost or corrupted on the move
    assert s.qa[0].counters.rc_path_moves == 1

    # the other QP bound to the profile moves too, at its first packet; slot 0 back to GOOD does not
    # move QP 0 back (a pinned path moves only when the controller takes it away)
    s.write([1])
    assert s.sent_on(0) == before and s.qa[1].counters.rc_path_moves == 1
    _set_state(s.a.ctl, STEV[0], 1, EvState.GOOD)
    s.write([0])
    assert s.sent_on(0) == before


def test_a_cc_profile_without_an_ev_profile_is_refused() -> None:
    ep = Endpoint(GID_A, [1], encap="stev")
    with pytest.raises(ValueError, match="cc_profile_id needs QpAttr.ev_profile_id"):
        ep.create_qp([(STEV[0], 1)], QpAttr(cc_profile_id=2))


def test_a_cc_config_goes_in_and_out_of_its_profile_by_value() -> None:
    """mrc_ctl.h passes struct mrc_ctl_cc_nscc_cfg by value.  Mutating a config after handing it in, or
    the one a query returned, changes nothing (it used to change every bound QP at once, unvalidated);
    query -> change -> modify is a change (the same object back used to count as none)."""
    from mrc.core import NsccConfig
    from mrc.ctl import CcProfileAttr, CcProfileAttrMask

    C = CcProfileAttrMask
    cfg = NsccConfig.for_network(8_000, 100)
    s = Setup(cc=cfg)
    s.write([0, 1])
    prof = s.a.ctl.cc_profile(CC_PROFILE)
    gen = prof.generation
    cfg.max_cwnd = 0  # the caller's object
    q = s.a.ctl.query_cc_profile(CC_PROFILE, C.CONFIG).cc_config
    q.max_cwnd = 0  # a queried copy
    assert all(qp.cc.cfg.max_cwnd == 150_000 for qp in s.qa)
    assert s.a.ctl.query_cc_profile(CC_PROFILE, C.CONFIG).cc_config.max_cwnd == 150_000
    q.max_cwnd = 4 * 4096
    s.a.ctl.modify_cc_profile(CC_PROFILE, CcProfileAttr(cc_config=q), C.CONFIG)
    assert prof.generation != gen
    s.write([0, 1])
    assert all(qp.cc.cfg.max_cwnd == 4 * 4096 and qp.cc.window() <= 4 * 4096 for qp in s.qa)
    q.max_cwnd = 0  # and the object handed in is the caller's again
    assert all(qp.cc.cfg.max_cwnd == 4 * 4096 for qp in s.qa)
    with pytest.raises(MrcCtlError) as ei:  # given back as it is now, it is validated
        s.a.ctl.modify_cc_profile(CC_PROFILE, CcProfileAttr(cc_config=q), C.CONFIG)
    assert ei.value.errno == errno.EINVAL
