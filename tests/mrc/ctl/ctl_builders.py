"""Builders shared by the control-model tests: EV format profiles (a plain module, imported by name:
`from conftest import` picks whichever conftest pytest loaded last when several folders are collected)."""

from __future__ import annotations

from mrc.ctl import (
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
