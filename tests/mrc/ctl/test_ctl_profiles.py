"""Profile state machines, EV operations, EV states, ev_min_active and EV events."""

from __future__ import annotations

import errno

import pytest
from ctl_builders import SRV6_FMT, STEV_FMT, make_fmt

from mrc.ctl import (
    EV_UNPOPULATED,
    AttrOpt,
    DeviceAttr,
    Ev,
    EvField,
    EvFieldsOp,
    EvFieldsOpArgs,
    EvFmtField,
    EvFmtMode,
    EvFmtOp,
    EvFmtOpArgs,
    EvFmtProfileAttr,
    EvFmtProfileAttrMask,
    EvMode,
    EvOp,
    EvOpArgs,
    EvOpEntry,
    EvOpFlags,
    EvProfileAttr,
    EvProfileAttrMask,
    EvState,
    MrcCtlContext,
    MrcCtlError,
    ProfileState,
    entries_for,
)

M = EvProfileAttrMask
FM = EvFmtProfileAttrMask
S = ProfileState
STEV_FIELDS = [EvField(16, 0, 0, 0, 0xFFFF), EvField(16, 0, 0, 0, 0xFFFF)]


def errno_of(fn, *args) -> int:
    with pytest.raises(MrcCtlError) as ei:
        fn(*args)
    return ei.value.errno


def offline_exp(ctx: MrcCtlContext, pid: int = 1, count: int = 4, fields=None, fmt: int = STEV_FMT,
                min_active: int = 1) -> None:
    attr = EvProfileAttr(profile_state=S.OFFLINE, ev_mode=EvMode.EXP, ev_fmt_profile_id=fmt, ev_count=count,
                         ev_min_active=min_active, ev_event_mask=EvState.GOOD | EvState.ASSUMED_BAD,
                         ev_fields_op=EvFieldsOpArgs(EvFieldsOp.MODIFY_FIELDS, list(fields or STEV_FIELDS)))
    ctx.modify_ev_profile(pid, attr, M.STATE | M.MODE | M.FMT_ID | M.COUNT | M.MIN_ACTIVE | M.EVENT_MASK
                          | M.EV_FIELDS_OP)


def stev(v: int, port: int = 1) -> Ev:
    return Ev.from_int(v, 4, port)


def populate(ctx: MrcCtlContext, pid: int, evs: list[Ev]) -> None:
    ctx.modify_ev_profile(pid, EvProfileAttr(ev_op=EvOpArgs(EvOp.REPLACE_EV, entries_for(evs))), M.EV_OP)


def online(ctx: MrcCtlContext, pid: int) -> None:
    ctx.modify_ev_profile(pid, EvProfileAttr(profile_state=S.ONLINE), M.STATE)


def state_of(ctx: MrcCtlContext, pid: int) -> ProfileState:
    return ctx.query_ev_profile(pid, M.STATE).cur_profile_state


def online_exp(ctx: MrcCtlContext, n: int = 4, min_active: int = 1) -> list[Ev]:
    offline_exp(ctx, count=n, min_active=min_active)
    evs = [stev(0x1000 + i, port=1 + i % 4) for i in range(n)]
    populate(ctx, 1, evs)
    online(ctx, 1)
    return evs


# ---------------------------------------------------------------- EV format profile
def test_fmt_profile_full_cycle_and_query(ctx: MrcCtlContext) -> None:
    q = ctx.query_ev_fmt_profile(SRV6_FMT, FM.STATE | FM.MODE | FM.OP)
    assert q.cur_profile_state == S.ONLINE and q.ev_fmt_mode == EvFmtMode.SRV6
    assert [f.width for f in q.ev_fmt_op.fmt_fields] == [32, 16, 16, 16, 16]
    ctx.modify_ev_fmt_profile(SRV6_FMT, EvFmtProfileAttr(profile_state=S.OFFLINE), FM.STATE)
    ctx.modify_ev_fmt_profile(SRV6_FMT, EvFmtProfileAttr(profile_state=S.INIT), FM.STATE)
    assert ctx.query_ev_fmt_profile(SRV6_FMT, FM.STATE).cur_profile_state == S.INIT


def test_fmt_query_capacity_e2big_reports_required(ctx: MrcCtlContext) -> None:
    attr = EvFmtProfileAttr(ev_fmt_op=EvFmtOpArgs(EvFmtOp.QUERY_FIELDS, fmt_field_count=3))
    with pytest.raises(MrcCtlError) as ei:
        ctx.query_ev_fmt_profile(SRV6_FMT, FM.OP, attr)
    assert ei.value.errno == errno.E2BIG and ei.value.required_count == 5
    bad = EvFmtProfileAttr(ev_fmt_op=EvFmtOpArgs(EvFmtOp.MODIFY_FIELDS))
    assert errno_of(ctx.query_ev_fmt_profile, SRV6_FMT, FM.OP, bad) == errno.EINVAL


def test_fmt_transitions_that_skip_a_step_are_invalid() -> None:
    ctx = MrcCtlContext()
    assert errno_of(ctx.modify_ev_fmt_profile, 3, EvFmtProfileAttr(profile_state=S.ONLINE), FM.STATE) == errno.EINVAL
    make_fmt(ctx, 3, EvFmtMode.STEV, [32])
    assert errno_of(ctx.modify_ev_fmt_profile, 3, EvFmtProfileAttr(profile_state=S.INIT), FM.STATE) == errno.EINVAL


def test_fmt_init_to_offline_requires_mode_and_online_requires_fields() -> None:
    ctx = MrcCtlContext()
    assert errno_of(ctx.modify_ev_fmt_profile, 3, EvFmtProfileAttr(profile_state=S.OFFLINE), FM.STATE) \
        == errno.EINVAL
    ctx.modify_ev_fmt_profile(3, EvFmtProfileAttr(profile_state=S.OFFLINE, ev_fmt_mode=EvFmtMode.UDP),
                              FM.STATE | FM.MODE)
    assert errno_of(ctx.modify_ev_fmt_profile, 3, EvFmtProfileAttr(profile_state=S.ONLINE), FM.STATE) \
        == errno.EINVAL


def test_fmt_online_allows_only_state(ctx: MrcCtlContext) -> None:
    attr = EvFmtProfileAttr(ev_fmt_mode=EvFmtMode.UDP)
    assert errno_of(ctx.modify_ev_fmt_profile, STEV_FMT, attr, FM.MODE) == errno.EINVAL
    attr = EvFmtProfileAttr(ev_fmt_op=EvFmtOpArgs(EvFmtOp.MODIFY_FIELDS, []))
    assert errno_of(ctx.modify_ev_fmt_profile, STEV_FMT, attr, FM.OP) == errno.EINVAL


def test_fmt_too_wide_is_e2big() -> None:
    ctx = MrcCtlContext()
    with pytest.raises(MrcCtlError) as ei:
        make_fmt(ctx, 3, EvFmtMode.STEV, [16, 16, 1])
    assert ei.value.errno == errno.E2BIG
    assert ctx.query_ev_fmt_profile(3, FM.STATE).cur_profile_state == S.INIT  # all-or-nothing


def test_fmt_busy_while_an_ev_profile_using_it_is_online(ctx: MrcCtlContext) -> None:
    online_exp(ctx)
    assert errno_of(ctx.modify_ev_fmt_profile, STEV_FMT, EvFmtProfileAttr(profile_state=S.OFFLINE), FM.STATE) \
        == errno.EBUSY
    ctx.modify_ev_profile(1, EvProfileAttr(profile_state=S.OFFLINE), M.STATE)
    ctx.modify_ev_fmt_profile(STEV_FMT, EvFmtProfileAttr(profile_state=S.OFFLINE), FM.STATE)


def test_unsupported_fmt_mode_and_bad_id() -> None:
    dev = DeviceAttr()
    dev.ev.ev_fmt_mode_mask = EvFmtMode.SRV6
    ctx = MrcCtlContext(dev)
    with pytest.raises(MrcCtlError) as ei:
        make_fmt(ctx, 1, EvFmtMode.STEV, [32])
    assert ei.value.errno == errno.EINVAL
    assert errno_of(ctx.query_ev_fmt_profile, 10_000, FM.STATE) == errno.EINVAL


# ---------------------------------------------------------------- EV profile: explicit arrays
def test_exp_starts_unpopulated_and_must_be_filled_before_online(ctx: MrcCtlContext) -> None:
    offline_exp(ctx, count=3)
    arr = ctx.query_ev_profile(1, M.EV_OP, EvProfileAttr(ev_op=EvOpArgs(EvOp.QUERY_EV_ARRAY)))
    assert [e.ev for e in arr.ev_op.entries] == [EV_UNPOPULATED] * 3
    assert errno_of(online, ctx, 1) == errno.EINVAL
    populate(ctx, 1, [stev(0x10001), stev(0x20002)])
    assert errno_of(online, ctx, 1) == errno.EINVAL
    populate(ctx, 1, [stev(0x30003, port=2)])
    online(ctx, 1)
    assert state_of(ctx, 1) == S.ONLINE
    w = ctx.ev_profile(1).wire(2)
    assert (w.udp_sport, w.flow_label_low16) == (0x0003, 0x0003)


def test_online_requires_format_online(ctx: MrcCtlContext) -> None:
    make_fmt(ctx, 5, EvFmtMode.STEV, [16, 16], online=False)
    offline_exp(ctx, fmt=5, count=1)
    populate(ctx, 1, [stev(1)])
    assert errno_of(online, ctx, 1) == errno.EINVAL


def test_init_to_offline_requires_mode_fmt_count_fields(ctx: MrcCtlContext) -> None:
    attr = EvProfileAttr(profile_state=S.OFFLINE, ev_mode=EvMode.EXP, ev_fmt_profile_id=STEV_FMT, ev_count=2)
    assert errno_of(ctx.modify_ev_profile, 1, attr, M.STATE | M.MODE | M.FMT_ID | M.COUNT) == errno.EINVAL
    assert errno_of(ctx.modify_ev_profile, 1, attr, M.STATE) == errno.EINVAL
    assert state_of(ctx, 1) == S.INIT


def test_online_requires_min_active_and_event_mask(ctx: MrcCtlContext) -> None:
    attr = EvProfileAttr(profile_state=S.OFFLINE, ev_mode=EvMode.EXP, ev_fmt_profile_id=STEV_FMT, ev_count=1,
                         ev_fields_op=EvFieldsOpArgs(EvFieldsOp.MODIFY_FIELDS, STEV_FIELDS))
    ctx.modify_ev_profile(1, attr, M.STATE | M.MODE | M.FMT_ID | M.COUNT | M.EV_FIELDS_OP)
    populate(ctx, 1, [stev(1)])
    assert errno_of(online, ctx, 1) == errno.EINVAL
    ctx.modify_ev_profile(1, EvProfileAttr(ev_min_active=1, ev_event_mask=EvState.GOOD),
                          M.MIN_ACTIVE | M.EVENT_MASK)
    online(ctx, 1)


def test_skipping_states_is_invalid(ctx: MrcCtlContext) -> None:
    assert errno_of(online, ctx, 1) == errno.EINVAL
    online_exp(ctx)
    assert errno_of(ctx.modify_ev_profile, 1, EvProfileAttr(profile_state=S.INIT), M.STATE) == errno.EINVAL


def test_full_cycle_frees_resources(ctx: MrcCtlContext) -> None:
    free0 = ctx.query_device().ev.ev_free_count
    online_exp(ctx, n=8)
    assert ctx.query_device().ev.ev_free_count == free0 - 8
    ctx.modify_ev_profile(1, EvProfileAttr(profile_state=S.OFFLINE), M.STATE)
    ctx.modify_ev_profile(1, EvProfileAttr(profile_state=S.INIT), M.STATE)
    assert ctx.query_device().ev.ev_free_count == free0
    assert ctx.query_ev_profile(1, M.COUNT).ev_count == 0


def test_count_limits_e2big_and_alignment_einval() -> None:
    dev = DeviceAttr.for_ports(2)
    dev.ev.ev_max_count_profile, dev.ev.ev_count_align, dev.ev.ev_max_count = 64, 4, 100
    ctx = MrcCtlContext(dev)
    make_fmt(ctx, STEV_FMT, EvFmtMode.STEV, [16, 16])
    assert errno_of(offline_exp, ctx, 1, 65) == errno.E2BIG
    assert errno_of(offline_exp, ctx, 1, 6) == errno.EINVAL
    offline_exp(ctx, 1, 64)
    assert errno_of(offline_exp, ctx, 2, 40) == errno.E2BIG  # only 36 EV resources left
    offline_exp(ctx, 2, 36)


def test_min_active_cannot_exceed_count(ctx: MrcCtlContext) -> None:
    assert errno_of(offline_exp, ctx, 1, 4, None, STEV_FMT, 5) == errno.EINVAL


def test_event_mask_only_good_and_assumed_bad(ctx: MrcCtlContext) -> None:
    offline_exp(ctx)
    assert errno_of(ctx.modify_ev_profile, 1, EvProfileAttr(ev_event_mask=EvState.DENIED), M.EVENT_MASK) \
        == errno.EINVAL


def test_ev_op_and_fields_op_are_mutually_exclusive(ctx: MrcCtlContext) -> None:
    offline_exp(ctx)
    assert errno_of(ctx.modify_ev_profile, 1, EvProfileAttr(), M.EV_OP | M.EV_FIELDS_OP) == errno.EINVAL
    assert errno_of(ctx.query_ev_profile, 1, M.EV_OP | M.EV_FIELDS_OP) == errno.EINVAL


def test_fields_validated_against_format_on_modify(ctx: MrcCtlContext) -> None:
    three = [EvField(8)] * 3
    assert errno_of(offline_exp, ctx, 1, 4, three) == errno.E2BIG
    assert errno_of(offline_exp, ctx, 1, 4, [EvField(16, init_val=1 << 16)]) == errno.EINVAL
    assert state_of(ctx, 1) == S.INIT


def test_replace_errors_enoent_einval_and_partial_rollback(ctx: MrcCtlContext) -> None:
    offline_exp(ctx, count=2)
    ghost = EvOpEntry(ev=stev(0xDEAD), ev_new=stev(1), state=EvState.GOOD)
    assert errno_of(ctx.modify_ev_profile, 1, EvProfileAttr(ev_op=EvOpArgs(EvOp.REPLACE_EV, [ghost])), M.EV_OP) \
        == errno.ENOENT
    bad_port = entries_for([Ev.from_int(1, 4, 7)])
    assert errno_of(ctx.modify_ev_profile, 1, EvProfileAttr(ev_op=EvOpArgs(EvOp.REPLACE_EV, bad_port)), M.EV_OP) \
        == errno.EINVAL
    too_long = entries_for([Ev(bytes(4) + b"\x01", 1)])  # a bit past the 32 the masks consume
    assert errno_of(ctx.modify_ev_profile, 1, EvProfileAttr(ev_op=EvOpArgs(EvOp.REPLACE_EV, too_long)), M.EV_OP) \
        == errno.EINVAL
    mixed = entries_for([stev(1)]) + [ghost]
    assert errno_of(ctx.modify_ev_profile, 1, EvProfileAttr(ev_op=EvOpArgs(EvOp.REPLACE_EV, mixed)), M.EV_OP) \
        == errno.ENOENT
    arr = ctx.query_ev_profile(1, M.EV_OP, EvProfileAttr(ev_op=EvOpArgs(EvOp.QUERY_EV_ARRAY)))
    assert all(not e.ev.populated for e in arr.ev_op.entries)  # the failed batch left nothing behind


def test_replace_single_copy_or_all_copies(ctx: MrcCtlContext) -> None:
    offline_exp(ctx, count=4)
    populate(ctx, 1, [stev(5), stev(5), stev(5), stev(6)])
    one = EvOpEntry(ev=stev(5), ev_new=stev(7), state=EvState.GOOD)
    ctx.modify_ev_profile(1, EvProfileAttr(ev_op=EvOpArgs(EvOp.REPLACE_EV, [one])), M.EV_OP)
    assert ctx.ev_profile(1).evs == [stev(7), stev(5), stev(5), stev(6)]
    allc = EvOpEntry(ev=stev(5), ev_new=stev(8), state=EvState.DENIED, flags=EvOpFlags.ALL_COPIES)
    ctx.modify_ev_profile(1, EvProfileAttr(ev_op=EvOpArgs(EvOp.REPLACE_EV, [allc])), M.EV_OP)
    assert ctx.ev_profile(1).evs == [stev(7), stev(8), stev(8), stev(6)]
    assert ctx.ev_profile(1).states[1:3] == [EvState.DENIED, EvState.DENIED]


def test_online_restrictions_without_modify_online_cap(ctx: MrcCtlContext) -> None:
    evs = online_exp(ctx)
    for mask, attr in [(M.COUNT, EvProfileAttr(ev_count=8)), (M.MIN_ACTIVE, EvProfileAttr(ev_min_active=2)),
                       (M.EVENT_MASK, EvProfileAttr(ev_event_mask=EvState.GOOD)),
                       (M.EV_OP, EvProfileAttr(ev_op=EvOpArgs(EvOp.REPLACE_EV, [EvOpEntry(evs[0], stev(9),
                                                                                        EvState.GOOD)]))),
                       (M.EV_FIELDS_OP, EvProfileAttr(ev_fields_op=EvFieldsOpArgs(EvFieldsOp.MODIFY_FIELDS,
                                                                                  STEV_FIELDS)))]:
        assert errno_of(ctx.modify_ev_profile, 1, attr, mask) == errno.EINVAL, mask
    # allowed while ONLINE: state changes and queries
    ctx.modify_ev_profile(1, EvProfileAttr(ev_op=EvOpArgs(EvOp.MODIFY_EV_STATE, [EvOpEntry(evs[0],
                                           state=EvState.DENIED)])), M.EV_OP)
    q = ctx.query_ev_profile(1, M.EV_FIELDS_OP)
    assert q.ev_fields_op.fields == STEV_FIELDS


def test_online_modifications_with_cap() -> None:
    dev = DeviceAttr.for_ports(4)
    dev.opt_attr |= AttrOpt.EV_PROFILE_MODIFY_ONLINE
    ctx = MrcCtlContext(dev)
    make_fmt(ctx, STEV_FMT, EvFmtMode.STEV, [16, 16])
    evs = online_exp(ctx)
    ctx.modify_ev_profile(1, EvProfileAttr(ev_event_mask=EvState.GOOD), M.EVENT_MASK)
    ctx.modify_ev_profile(1, EvProfileAttr(ev_op=EvOpArgs(EvOp.REPLACE_EV, [EvOpEntry(evs[0], stev(9),
                                                                                       EvState.GOOD)])), M.EV_OP)
    assert ctx.ev_profile(1).evs[0] == stev(9)
    assert errno_of(ctx.modify_ev_profile, 1, EvProfileAttr(ev_count=8), M.COUNT) == errno.EINVAL


def test_ebusy_while_qps_use_the_profile(ctx: MrcCtlContext) -> None:
    online_exp(ctx)
    ctx.attach_qp(0x11, 1)
    assert errno_of(ctx.modify_ev_profile, 1, EvProfileAttr(profile_state=S.OFFLINE), M.STATE) == errno.EBUSY
    ctx.detach_qp(0x11)
    ctx.modify_ev_profile(1, EvProfileAttr(profile_state=S.OFFLINE), M.STATE)
    assert errno_of(ctx.attach_qp, 0x12, 1) == errno.EINVAL  # profile not ONLINE


def test_modify_and_query_ev_state(ctx: MrcCtlContext) -> None:
    evs = online_exp(ctx)
    ctx.modify_ev_profile(1, EvProfileAttr(ev_op=EvOpArgs(EvOp.MODIFY_EV_STATE, [EvOpEntry(evs[1],
                                           state=EvState.DENIED)])), M.EV_OP)
    q = ctx.query_ev_profile(1, M.EV_OP, EvProfileAttr(ev_op=EvOpArgs(EvOp.QUERY_EV_STATE,
                                                                      [EvOpEntry(evs[0]), EvOpEntry(evs[1])])))
    assert [e.state for e in q.ev_op.entries] == [EvState.GOOD, EvState.DENIED]
    assert errno_of(ctx.query_ev_profile, 1, M.EV_OP,
                    EvProfileAttr(ev_op=EvOpArgs(EvOp.QUERY_EV_STATE, [EvOpEntry(stev(0xBEEF))]))) == errno.ENOENT
    ab = EvProfileAttr(ev_op=EvOpArgs(EvOp.MODIFY_EV_STATE, [EvOpEntry(evs[0], state=EvState.ASSUMED_BAD)]))
    assert errno_of(ctx.modify_ev_profile, 1, ab, M.EV_OP) == errno.EINVAL


def test_query_ev_array_capacity(ctx: MrcCtlContext) -> None:
    online_exp(ctx, n=4)
    with pytest.raises(MrcCtlError) as ei:
        ctx.query_ev_profile(1, M.EV_OP, EvProfileAttr(ev_op=EvOpArgs(EvOp.QUERY_EV_ARRAY, entry_count=2)))
    assert ei.value.errno == errno.E2BIG and ei.value.required_count == 4
    q = ctx.query_ev_profile(1, M.EV_OP, EvProfileAttr(ev_op=EvOpArgs(EvOp.QUERY_EV_ARRAY, entry_count=4)))
    assert q.ev_op.entry_count == 4
    with pytest.raises(MrcCtlError) as ei:
        ctx.query_ev_profile(1, M.EV_FIELDS_OP, EvProfileAttr(ev_fields_op=EvFieldsOpArgs(field_count=1)))
    assert ei.value.errno == errno.E2BIG and ei.value.required_count == 2


def test_query_cannot_modify(ctx: MrcCtlContext) -> None:
    online_exp(ctx)
    attr = EvProfileAttr(ev_op=EvOpArgs(EvOp.MODIFY_EV_STATE, []))
    assert errno_of(ctx.query_ev_profile, 1, M.EV_OP, attr) == errno.EINVAL


def test_op_batch_cap_e2big() -> None:
    dev = DeviceAttr.for_ports(2)
    dev.ev.ev_op_max_entries = 2
    ctx = MrcCtlContext(dev)
    make_fmt(ctx, STEV_FMT, EvFmtMode.STEV, [16, 16])
    offline_exp(ctx, count=4)
    attr = EvProfileAttr(ev_op=EvOpArgs(EvOp.REPLACE_EV, entries_for([stev(i) for i in range(1, 4)])))
    assert errno_of(ctx.modify_ev_profile, 1, attr, M.EV_OP) == errno.E2BIG


def test_auto_mode_has_no_array(ctx: MrcCtlContext) -> None:
    attr = EvProfileAttr(profile_state=S.OFFLINE, ev_mode=EvMode.AUTO, ev_min_active=0,
                         ev_event_mask=EvState.NONE)
    ctx.modify_ev_profile(3, attr, M.STATE | M.MODE | M.MIN_ACTIVE | M.EVENT_MASK)
    online(ctx, 3)
    assert errno_of(ctx.query_ev_profile, 3, M.EV_OP) == errno.EINVAL


# ---------------------------------------------------------------- generated arrays
def gen_profile(ctx: MrcCtlContext, count: int, fields: list[EvField], fmt: int = STEV_FMT, pid: int = 1) -> None:
    attr = EvProfileAttr(profile_state=S.OFFLINE, ev_mode=EvMode.GEN, ev_fmt_profile_id=fmt, ev_count=count,
                         ev_min_active=count // 4, ev_event_mask=EvState.GOOD | EvState.ASSUMED_BAD,
                         ev_fields_op=EvFieldsOpArgs(EvFieldsOp.MODIFY_FIELDS, fields))
    ctx.modify_ev_profile(pid, attr, M.STATE | M.MODE | M.FMT_ID | M.COUNT | M.MIN_ACTIVE | M.EVENT_MASK
                          | M.EV_FIELDS_OP)


def test_generated_fields_drawn_in_min_max_and_deterministic(ctx: MrcCtlContext) -> None:
    fields = [EvField(32, 0x13131313)] + [EvField(16, i << 8, 1, 0xC, 0x000F) for i in range(1, 5)]
    gen_profile(ctx, 64, fields, fmt=SRV6_FMT)
    online(ctx, 1)
    prof = ctx.ev_profile(1)
    assert len(prof.evs) == 64 and len(set(prof.evs)) == 64
    assert {ev.port for ev in prof.evs} == {1, 2, 3, 4}
    for i, ev in enumerate(prof.evs):
        vals = prof.field_values(ev)
        assert vals[0] == 0 and all(1 <= v <= 0xC for v in vals[1:])
        dst = prof.wire(i).srv6_dst
        assert dst[:4] == bytes.fromhex("13131313") and [dst[4 + 2 * k] for k in range(4)] == [1, 2, 3, 4]
    other = MrcCtlContext(ctx.query_device())
    make_fmt(other, SRV6_FMT, EvFmtMode.SRV6, [32, 16, 16, 16, 16])
    gen_profile(other, 64, fields, fmt=SRV6_FMT)
    assert other.ev_profile(1).evs == prof.evs


def test_generated_max_zero_means_full_mask_range(ctx: MrcCtlContext) -> None:
    gen_profile(ctx, 32, [EvField(16, 0, 0, 0, 0xFFFF), EvField(16, 0, 0, 0, 0xFFFF)])
    vals = [ctx.ev_profile(1).evs[i].to_int(4) for i in range(32)]
    assert len(set(vals)) == 32 and max(vals) > 0xFFFF


def test_generated_deny_nonexistent_links(ctx: MrcCtlContext) -> None:
    # T0 has 180 links of 256 values (public example): deny the rest through the callback.
    make_fmt(ctx, 9, EvFmtMode.STEV, [8, 4, 4])
    gen_profile(ctx, 512, [EvField(8, 0, 0, 255, 0xFF), EvField(4, 0, 0, 15, 0xF), EvField(4, 0, 0, 15, 0xF)],
                fmt=9)
    denied = ctx.deny_evs(1, lambda ev, vals: vals[0] < 180)
    prof = ctx.ev_profile(1)
    assert denied and all(prof.field_values(ev)[0] >= 180 for ev in denied)
    for ev, st in zip(prof.evs, prof.states):
        assert (st == EvState.DENIED) == (prof.field_values(ev)[0] >= 180)
    online(ctx, 1)
    assert ctx.deny_evs(1, lambda ev, vals: vals[0] < 180) == []


def test_generated_regenerates_when_fields_change_offline(ctx: MrcCtlContext) -> None:
    gen_profile(ctx, 8, [EvField(16, 0, 0, 3, 0x3), EvField(16, 0, 0, 3, 0x3)])
    before = list(ctx.ev_profile(1).evs)
    wide = [EvField(16, 0, 0x10, 0xFF, 0xFF), EvField(16, 0, 0, 0xFF, 0xFF)]
    ctx.modify_ev_profile(1, EvProfileAttr(ev_fields_op=EvFieldsOpArgs(EvFieldsOp.MODIFY_FIELDS, wide)),
                          M.EV_FIELDS_OP)
    after = ctx.ev_profile(1).evs
    assert after != before and all(ctx.ev_profile(1).field_values(e)[0] >= 0x10 for e in after)


# ---------------------------------------------------------------- EV states, floor and events
def test_endpoint_assumed_bad_respects_min_active(ctx: MrcCtlContext) -> None:
    online_exp(ctx, n=4, min_active=2)
    prof = ctx.ev_profile(1)
    assert prof.endpoint_set_state(0, EvState.ASSUMED_BAD)
    assert prof.endpoint_set_state(1, EvState.ASSUMED_BAD)
    assert not prof.endpoint_set_state(2, EvState.ASSUMED_BAD)  # would leave 1 GOOD < 2
    assert prof.good_count() == 2 and prof.good_indexes() == [2, 3]
    assert prof.endpoint_set_state(0, EvState.GOOD)
    assert prof.endpoint_set_state(2, EvState.ASSUMED_BAD)


def test_endpoint_cannot_touch_denied(ctx: MrcCtlContext) -> None:
    evs = online_exp(ctx)
    ctx.modify_ev_profile(1, EvProfileAttr(ev_op=EvOpArgs(EvOp.MODIFY_EV_STATE, [EvOpEntry(evs[0],
                                           state=EvState.DENIED)])), M.EV_OP)
    assert not ctx.ev_profile(1).endpoint_set_state(0, EvState.GOOD)
    assert ctx.ev_profile(1).states[0] == EvState.DENIED


def test_events_only_good_and_assumed_bad_with_drop_counts(ctx: MrcCtlContext) -> None:
    cq = ctx.create_ev_event_cq(2)
    evs = online_exp(ctx, n=4, min_active=0)
    prof = ctx.ev_profile(1)
    prof.endpoint_set_state(0, EvState.ASSUMED_BAD)
    ctx.modify_ev_profile(1, EvProfileAttr(ev_op=EvOpArgs(EvOp.MODIFY_EV_STATE, [EvOpEntry(evs[1],
                                           state=EvState.DENIED)])), M.EV_OP)  # DENIED: not reported
    prof.endpoint_set_state(0, EvState.GOOD)
    prof.endpoint_set_state(2, EvState.ASSUMED_BAD)  # queue full: dropped
    prof.endpoint_set_state(3, EvState.ASSUMED_BAD)  # dropped
    got = ctx.poll_ev_event(cq, 10)
    assert [(e.ev, e.state, e.drop_count) for e in got] == [(evs[0], EvState.ASSUMED_BAD, 0),
                                                           (evs[0], EvState.GOOD, 0)]
    prof.endpoint_set_state(2, EvState.GOOD)
    (e,) = ctx.poll_ev_event(cq, 10)
    assert (e.profile_id, e.ev, e.state, e.drop_count) == (1, evs[2], EvState.GOOD, 2)
    assert cq.total_dropped == 2


def test_event_mask_filters(ctx: MrcCtlContext) -> None:
    cq = ctx.create_ev_event_cq(16)
    online_exp(ctx, n=4, min_active=0)
    ctx.modify_ev_profile(1, EvProfileAttr(profile_state=S.OFFLINE), M.STATE)
    ctx.modify_ev_profile(1, EvProfileAttr(profile_state=S.ONLINE, ev_event_mask=EvState.GOOD),
                          M.STATE | M.EVENT_MASK)
    prof = ctx.ev_profile(1)
    prof.endpoint_set_state(0, EvState.ASSUMED_BAD)
    prof.endpoint_set_state(0, EvState.GOOD)
    assert [e.state for e in ctx.poll_ev_event(cq, 16)] == [EvState.GOOD]


def test_port_down_forces_assumed_bad_past_floor(ctx: MrcCtlContext) -> None:
    online_exp(ctx, n=8, min_active=8)
    moved = ctx.port_down(1)
    prof = ctx.ev_profile(1)
    assert moved == 2 and all(prof.states[i] == EvState.ASSUMED_BAD for i, ev in enumerate(prof.evs)
                              if ev.port == 1)
    assert ctx.port_status_mask() == 0b11100
    # the events say why (EvEvent.evidence), and an event queue keeps it
    assert [e.evidence for e in prof.events] == [{"rule": "port_down", "port": 1, "ports_down": [1]}] * 2


def test_a_port_disabled_then_enabled_is_up_again(ctx: MrcCtlContext) -> None:
    """mrc_ctl_modify_port(DISABLED) retires the port's EVs as a link down does, but ENABLED again makes
    the port up again (port_is_up, port_status_mask: what a PORT_STATUS_UPDATE reports); only the link
    state (port_down / port_up) is the link's.  It stayed down for good before: disabling called port_down."""
    from mrc.ctl import PortAdminState, PortAttr

    online_exp(ctx, n=8, min_active=8)
    prof = ctx.ev_profile(1)
    ctx.modify_port(1, PortAttr(PortAdminState.DISABLED))
    assert all(prof.states[i] == EvState.ASSUMED_BAD for i, ev in enumerate(prof.evs) if ev.port == 1)
    assert not ctx.port_is_up(1) and ctx.port_status_mask() == 0b11100
    ctx.modify_port(1, PortAttr(PortAdminState.ENABLED))
    assert ctx.port_is_up(1) and ctx.port_status_mask() == 0b11110
    # a link down is not undone by the admin state, only by port_up
    ctx.port_down(2)
    ctx.modify_port(2, PortAttr(PortAdminState.DISABLED))
    ctx.modify_port(2, PortAttr(PortAdminState.ENABLED))
    assert not ctx.port_is_up(2)
    ctx.port_up(2)
    assert ctx.port_is_up(2) and ctx.port_status_mask() == 0b11110


def test_an_event_queue_keeps_the_evidence(ctx: MrcCtlContext) -> None:
    cq = ctx.create_ev_event_cq(16)
    online_exp(ctx, n=4, min_active=0)
    prof = ctx.ev_profile(1)
    prof.endpoint_set_state(2, EvState.ASSUMED_BAD, qpn=9, now_ns=5, cause="rack", evidence={"rule": "fifo"})
    (e,) = ctx.poll_ev_event(cq, 16)
    assert (e.profile_id, e.ev_index, e.cause, e.evidence) == (1, 2, "rack", {"rule": "fifo"})


def test_enum_values_outside_the_header_are_einval(ctx: MrcCtlContext) -> None:
    """A state or admin value that is none of the header's enum values is EINVAL like any other bad
    argument, not a Python ValueError."""
    from mrc.ctl import CcProfileAttr, CcProfileAttrMask, PortAttr, PortAttrMask

    assert errno_of(ctx.modify_ev_fmt_profile, 3, EvFmtProfileAttr(profile_state=7), FM.STATE) == errno.EINVAL
    assert errno_of(ctx.modify_ev_profile, 1, EvProfileAttr(profile_state=7), M.STATE) == errno.EINVAL
    assert errno_of(ctx.modify_cc_profile, 1, CcProfileAttr(profile_state=7), CcProfileAttrMask.STATE) == errno.EINVAL
    assert errno_of(ctx.modify_port, 1, PortAttr(9), PortAttrMask.ADMIN_STATE) == errno.EINVAL
    # nothing changed on the way
    ctx.modify_ev_fmt_profile(3, EvFmtProfileAttr(profile_state=S.OFFLINE, ev_fmt_mode=EvFmtMode.UDP),
                              FM.STATE | FM.MODE)


def test_operation_values_outside_the_header_are_einval(ctx: MrcCtlContext) -> None:
    """The operation enums too (``ev_op.op``, ``ev_fields_op.op``, ``ev_fmt_op.op``, the endpoint
    batch's ``op_type``): EINVAL, never a bare ValueError and never silently ignored (docs/mrc_ctl.md)."""
    from mrc.ctl import EpReq

    offline_exp(ctx)
    assert errno_of(ctx.modify_ev_profile, 1, EvProfileAttr(ev_op=EvOpArgs(9, [])), M.EV_OP) == errno.EINVAL
    assert errno_of(ctx.modify_ev_profile, 1, EvProfileAttr(ev_fields_op=EvFieldsOpArgs(9, [])),
                    M.EV_FIELDS_OP) == errno.EINVAL
    assert errno_of(ctx.query_ev_fmt_profile, STEV_FMT, FM.OP, EvFmtProfileAttr(ev_fmt_op=EvFmtOpArgs(9))) \
        == errno.EINVAL
    ctx.modify_ev_fmt_profile(3, EvFmtProfileAttr(profile_state=S.OFFLINE, ev_fmt_mode=EvFmtMode.UDP),
                              FM.STATE | FM.MODE)
    assert errno_of(ctx.modify_ev_fmt_profile, 3, EvFmtProfileAttr(ev_fmt_op=EvFmtOpArgs(9, [])), FM.OP) \
        == errno.EINVAL

    class NoNet:
        def now_ns(self) -> int:
            return 0

        def send(self, request) -> None:
            raise AssertionError("nothing may be sent for an invalid batch")

        def wait(self, deadline_ns: int) -> list:
            return []

    req = EpReq(1, "fd00::1", "fd00::2", EvFmtMode.STEV, stev(0x1234))
    assert errno_of(ctx.ep_batch_send_wait, NoNet(), 0, 9, [req], 1000) == errno.EINVAL


def test_format_profile_modify_may_query_its_fields_also_online(ctx: MrcCtlContext) -> None:
    """mrc_ctl.h allows QUERY_FIELDS in mrc_ctl_modify_ev_fmt_profile (OFFLINE and ONLINE): the fields
    come back in the attr, E2BIG with the needed count when the array is short; it used to be ignored."""
    attr = EvFmtProfileAttr(ev_fmt_op=EvFmtOpArgs(EvFmtOp.QUERY_FIELDS))
    ctx.modify_ev_fmt_profile(SRV6_FMT, attr, FM.OP)  # ONLINE
    assert [f.width for f in attr.ev_fmt_op.fmt_fields] == [32, 16, 16, 16, 16]
    assert attr.ev_fmt_op.fmt_field_count == 5
    with pytest.raises(MrcCtlError) as ei:
        ctx.modify_ev_fmt_profile(SRV6_FMT, EvFmtProfileAttr(ev_fmt_op=EvFmtOpArgs(EvFmtOp.QUERY_FIELDS, [], 2)),
                                  FM.OP)
    assert ei.value.errno == errno.E2BIG and ei.value.required_count == 5
    assert errno_of(ctx.modify_ev_fmt_profile, SRV6_FMT, EvFmtProfileAttr(
        ev_fmt_op=EvFmtOpArgs(EvFmtOp.MODIFY_FIELDS, [EvFmtField(16)])), FM.OP) == errno.EINVAL


def test_the_docs_first_example_runs_as_written():
    """docs/mrc_ctl.md's first code block, executed as it stands (it used names it never defined):
    the EV profile it builds goes ONLINE with its 8 EVs."""
    import re
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[3] / "docs" / "mrc_ctl.md").read_text()
    code = re.search(r"```python\n(.*?)```", doc, re.DOTALL).group(1)
    ns: dict = {}
    exec(compile(code, "docs/mrc_ctl.md", "exec"), ns)  # noqa: S102 -- the doc's own example is what is tested
    prof = ns["ctx"].ev_profile(2)
    assert prof.state == ProfileState.ONLINE and len(prof.evs) == 8
