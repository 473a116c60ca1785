"""Programming sequences over a context's public calls, shared by every loader of profiles.

The calls ``mrc_ctl.h`` asks for to bring a format profile and an EXP EV profile ONLINE (OFFLINE with
their fields, the EVs into unpopulated slots, then ONLINE): the plan loader (``mrc.endpoint.plan``)
and the endpoint's own wire-value profiles (``mrc.core.Endpoint.make_ev_profile``) both use these.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mrc.ctl import (
    Ev,
    EvField,
    EvFieldsOp,
    EvFieldsOpArgs,
    EvFmtField,
    EvFmtOp,
    EvFmtOpArgs,
    EvFmtProfileAttr,
    EvFmtProfileAttrMask,
    EvMode,
    EvOp,
    EvOpArgs,
    EvProfileAttr,
    EvProfileAttrMask,
    EvState,
    ProfileState,
    entries_for,
)


def online_fmt_profile(ctx: Any, fid: int, mode: Any, widths: Sequence[int]) -> None:
    """Format profile ``fid``: ``mode`` with one field per width, ONLINE (MrcCtlError if refused)."""
    F, S = EvFmtProfileAttrMask, ProfileState
    ctx.modify_ev_fmt_profile(fid, EvFmtProfileAttr(
        profile_state=S.OFFLINE, ev_fmt_mode=mode,
        ev_fmt_op=EvFmtOpArgs(EvFmtOp.MODIFY_FIELDS, [EvFmtField(w) for w in widths])), F.STATE | F.MODE | F.OP)
    ctx.modify_ev_fmt_profile(fid, EvFmtProfileAttr(profile_state=S.ONLINE), F.STATE)


def online_exp_ev_profile(ctx: Any, pid: int, fid: int, widths: Sequence[int], evs: Sequence[Ev],
                          min_active: int) -> None:
    """EV profile ``pid``: EXP over format ``fid``, each EV field taking all of its format field's bits
    (so an EV's expansion is the EV itself), ``evs`` in its slots, GOOD/ASSUMED_BAD events, ONLINE."""
    M, S = EvProfileAttrMask, ProfileState
    fields = [EvField(w, 0, 0, 0, (1 << w) - 1) for w in widths]
    ctx.modify_ev_profile(pid, EvProfileAttr(
        profile_state=S.OFFLINE, ev_mode=EvMode.EXP, ev_fmt_profile_id=fid, ev_count=len(evs),
        ev_min_active=min(max(0, min_active), len(evs)), ev_event_mask=EvState.GOOD | EvState.ASSUMED_BAD,
        ev_fields_op=EvFieldsOpArgs(EvFieldsOp.MODIFY_FIELDS, fields)),
        M.STATE | M.MODE | M.FMT_ID | M.COUNT | M.MIN_ACTIVE | M.EVENT_MASK | M.EV_FIELDS_OP)
    ctx.modify_ev_profile(pid, EvProfileAttr(ev_op=EvOpArgs(EvOp.REPLACE_EV, entries_for(evs))), M.EV_OP)
    ctx.modify_ev_profile(pid, EvProfileAttr(profile_state=S.ONLINE), M.STATE)
