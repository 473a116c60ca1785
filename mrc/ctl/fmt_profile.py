"""EV format profiles: the wire layout (mode and ordered field widths) EV profiles expand into."""

from __future__ import annotations

import errno
from collections.abc import Callable
from dataclasses import dataclass, field

from .constants import EvFmtMode, EvFmtOp, EvFmtProfileAttrMask, ProfileState
from .errors import MrcCtlError, einval, enum_arg
from .expansion import validate_fmt_fields
from .types import EvFmtField, EvFmtOpArgs, EvFmtProfileAttr, vendor_cfg_bytes

M = EvFmtProfileAttrMask
S = ProfileState
_ALLOWED_STEPS = {(S.INIT, S.OFFLINE), (S.OFFLINE, S.ONLINE), (S.ONLINE, S.OFFLINE), (S.OFFLINE, S.INIT)}


def check_transition(kind: str, cur: ProfileState, new: ProfileState) -> None:
    """Allow only INIT -> OFFLINE -> ONLINE -> OFFLINE -> INIT (and staying put)."""
    if cur != new and (cur, new) not in _ALLOWED_STEPS:
        raise einval(f"{kind}: {cur.name} -> {new.name} is not allowed "
                     "(INIT -> OFFLINE -> ONLINE -> OFFLINE -> INIT)")


@dataclass
class EvFmtProfile:
    """One EV format profile and its state machine (mrc_ctl_modify/query_ev_fmt_profile)."""

    profile_id: int
    state: ProfileState = ProfileState.INIT
    mode: EvFmtMode | None = None
    fmt_fields: tuple[EvFmtField, ...] = ()
    vendor_cfg: bytes = b""
    allowed_modes: EvFmtMode = EvFmtMode.STEV | EvFmtMode.SRV6 | EvFmtMode.UDP
    _busy: Callable[[], bool] = field(default=lambda: False, repr=False)

    def modify(self, attr: EvFmtProfileAttr, mask: EvFmtProfileAttrMask) -> None:
        """Apply ``attr`` under ``mask``; all-or-nothing (validation happens before any change)."""
        mask = M(mask)
        if mask & M.CUR_STATE:
            raise einval("EV format profile: CUR_STATE is read-only")
        cur = self.state
        new = enum_arg(ProfileState, attr.profile_state, "profile_state") if mask & M.STATE else cur
        check_transition(f"EV format profile {self.profile_id}", cur, new)
        op = enum_arg(EvFmtOp, attr.ev_fmt_op.op, "ev_fmt_op.op") if mask & M.OP else None
        if cur == S.INIT and new != S.OFFLINE and mask & ~M.STATE:
            raise einval(f"EV format profile {self.profile_id} is INIT: configure it in the INIT -> OFFLINE call")
        if cur == S.ONLINE:
            if mask & (M.MODE | M.VENDOR_CFG) or op == EvFmtOp.MODIFY_FIELDS:
                raise einval(f"EV format profile {self.profile_id} is ONLINE: only STATE(OFFLINE) may be modified")
            if new != cur and self._busy():
                raise MrcCtlError(errno.EBUSY, f"EV format profile {self.profile_id}: an EV profile using it is ONLINE")
        mode = self.mode
        if mask & M.MODE:
            mode = enum_arg(EvFmtMode, attr.ev_fmt_mode, "ev_fmt_mode")
            if mode not in (EvFmtMode.STEV, EvFmtMode.SRV6, EvFmtMode.UDP):
                raise einval(f"EV format mode {attr.ev_fmt_mode!r} must be exactly one of STEV, SRV6, UDP")
            if not mode & self.allowed_modes:
                raise einval(f"EV format mode {mode.name} is not supported by the device")
        vendor_cfg = vendor_cfg_bytes(attr.vendor_cfg, f"EV format profile {self.profile_id}") \
            if mask & M.VENDOR_CFG else self.vendor_cfg
        fields = self.fmt_fields
        if op == EvFmtOp.MODIFY_FIELDS:
            fields = tuple(attr.ev_fmt_op.fmt_fields)
            if attr.ev_fmt_op.fmt_field_count is not None and attr.ev_fmt_op.fmt_field_count != len(fields):
                raise einval("fmt_field_count does not match the number of fmt_fields supplied")
        if cur == S.INIT and new == S.OFFLINE and mode is None:
            raise einval(f"EV format profile {self.profile_id}: INIT -> OFFLINE requires MODE")
        if new == S.ONLINE and not fields:
            raise einval(f"EV format profile {self.profile_id}: ONLINE requires MODIFY_FIELDS first")
        if fields and mode is not None and (op == EvFmtOp.MODIFY_FIELDS or mask & M.MODE or new == S.ONLINE):
            validate_fmt_fields(mode, fields)
        cap = attr.ev_fmt_op.fmt_field_count
        if op == EvFmtOp.QUERY_FIELDS and cap is not None and cap < len(fields):
            raise MrcCtlError(errno.E2BIG, f"{len(fields)} format fields but room for {cap}",
                              required_count=len(fields))
        # commit
        if new == S.INIT:
            self.mode, self.fmt_fields, self.vendor_cfg = None, (), b""
        else:
            self.mode, self.fmt_fields = mode, fields
            self.vendor_cfg = vendor_cfg
        self.state = new
        if op == EvFmtOp.QUERY_FIELDS:  # the header allows QUERY_FIELDS in a modify call (OFFLINE and ONLINE)
            attr.ev_fmt_op = EvFmtOpArgs(EvFmtOp.QUERY_FIELDS, list(self.fmt_fields), len(self.fmt_fields))

    def query(self, mask: EvFmtProfileAttrMask, capacity: int | None = None) -> EvFmtProfileAttr:
        """Return the attributes selected by ``mask``; E2BIG (with required_count) if too few slots."""
        mask = M(mask)
        out = EvFmtProfileAttr()
        if mask & (M.STATE | M.CUR_STATE):
            out.profile_state = out.cur_profile_state = self.state
        if mask & M.MODE and self.mode is not None:
            out.ev_fmt_mode = self.mode
        if mask & M.OP:
            n = len(self.fmt_fields)
            if capacity is not None and capacity < n:
                raise MrcCtlError(errno.E2BIG, f"{n} format fields but room for {capacity}", required_count=n)
            out.ev_fmt_op = EvFmtOpArgs(EvFmtOp.QUERY_FIELDS, list(self.fmt_fields), n)
        if mask & M.VENDOR_CFG:
            out.vendor_cfg = self.vendor_cfg
        return out
