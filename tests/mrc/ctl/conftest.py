"""Builders shared by the control-model tests: a configured context and EV format profiles."""

from __future__ import annotations

import pytest

from mrc.ctl import (
    DeviceAttr,
    EvFmtField,
    EvFmtMode,
    EvFmtOp,
    EvFmtOpArgs,
    EvFmtProfileAttr,
    EvFmtProfileAttrMask,
    MrcCtlContext,
    ProfileState,
)

FM = EvFmtProfileAttrMask
STEV_FMT = 1
SRV6_FMT = 2


def make_fmt(ctx: MrcCtlContext, pid: int, mode: EvFmtMode, widths: list[int], *, online: bool = True) -> None:
    """Configure EV format profile ``pid`` (INIT -> OFFLINE [-> ONLINE]) as the public example does."""
    attr = EvFmtProfileAttr(profile_state=ProfileState.OFFLINE, ev_fmt_mode=mode,
                            ev_fmt_op=EvFmtOpArgs(EvFmtOp.MODIFY_FIELDS, [EvFmtField(w) for w in widths]))
    ctx.modify_ev_fmt_profile(pid, attr, FM.STATE | FM.MODE | FM.OP)
    if online:
        ctx.modify_ev_fmt_profile(pid, EvFmtProfileAttr(profile_state=ProfileState.ONLINE), FM.STATE)


@pytest.fixture
def ctx() -> MrcCtlContext:
    """A 4-port device with an ONLINE STEV (2 x 16) and SRv6 (32 + 4 x 16) format profile."""
    c = MrcCtlContext(DeviceAttr.for_ports(4))
    make_fmt(c, STEV_FMT, EvFmtMode.STEV, [16, 16])
    make_fmt(c, SRV6_FMT, EvFmtMode.SRV6, [32, 16, 16, 16, 16])
    return c
