"""CC profiles; the NSCC configuration (struct mrc_ctl_cc_nscc_cfg) is ``mrc.core.nscc.NsccConfig``."""

from __future__ import annotations

import copy
import errno
from collections.abc import Callable

from mrc.core.nscc import NsccConfig  # the one NSCC configuration type (defaults, for_network, validate)

from .constants import CC_ALGO_NSCC, AttrOpt, CcProfileAttrMask, ProfileState
from .errors import MrcCtlError, einval, enum_arg
from .fmt_profile import check_transition
from .types import CcProfileAttr, DeviceAttr, vendor_cfg_bytes

M = CcProfileAttrMask
S = ProfileState


class CcProfile:
    """One CC profile and its state machine (mrc_ctl_modify/query_cc_profile)."""

    def __init__(self, profile_id: int, device: DeviceAttr, qps_attached: Callable[[int], int]) -> None:
        self.profile_id = profile_id
        self.device = device
        self._qps_attached = qps_attached
        self.state = S.INIT
        self.algorithm: str | None = None
        self.algorithm_set = False
        self.cc_config: object | None = None
        self.config_set = False
        self.vendor_cfg = b""
        self.generation = 0  # bumped when the algorithm or config changes: bound QPs re-read it

    def modify(self, attr: CcProfileAttr, mask: CcProfileAttrMask) -> None:
        """Apply ``attr`` under ``mask``: to OFFLINE needs ALGORITHM, to ONLINE needs CONFIG."""
        mask = M(mask)
        pid = self.profile_id
        if mask & M.CUR_STATE:
            raise einval(f"CC profile {pid}: CUR_STATE is read-only")
        cur = self.state
        new = enum_arg(ProfileState, attr.profile_state, "profile_state") if mask & M.STATE else cur
        check_transition(f"CC profile {pid}", cur, new)
        if cur == S.INIT and new == S.INIT and mask & ~M.STATE:
            raise einval(f"CC profile {pid} is INIT: configure it in the INIT -> OFFLINE call")
        if cur == S.ONLINE:
            allowed = M.STATE | (M.CONFIG if self.device.opt_attr & AttrOpt.CC_PROFILE_MODIFY_ONLINE else 0)
            if mask & ~allowed:
                raise einval(f"CC profile {pid} is ONLINE: {M(mask & ~allowed)!r} cannot be modified")
            if new == S.OFFLINE and self._qps_attached(pid):
                raise MrcCtlError(errno.EBUSY, f"CC profile {pid}: QP(s) use it")
        algorithm, algorithm_set = self.algorithm, self.algorithm_set
        if mask & M.ALGORITHM:
            algorithm, algorithm_set = attr.algorithm, True
            if algorithm is not None and algorithm not in self.device.cc.algorithms:
                raise einval(f"CC algorithm {algorithm!r} is not one of {list(self.device.cc.algorithms)}")
        vendor_cfg = vendor_cfg_bytes(attr.vendor_cfg, f"CC profile {pid}") if mask & M.VENDOR_CFG \
            else self.vendor_cfg
        config, config_set = self.cc_config, self.config_set
        if mask & M.CONFIG:
            # by value, as mrc_ctl.h passes struct mrc_ctl_cc_nscc_cfg: the caller's object stays the
            # caller's (until 2026-12-06 it was kept by reference: mutating it changed the bound QPs
            # unvalidated, and modify with the same object mutated counted as no change)
            config, config_set = copy.copy(attr.cc_config), True
        if cur == S.INIT and new == S.OFFLINE and not algorithm_set:
            raise einval(f"CC profile {pid}: INIT -> OFFLINE requires ALGORITHM")
        if new == S.ONLINE and not config_set and algorithm is not None:
            raise einval(f"CC profile {pid}: ONLINE requires CONFIG")
        if config_set and algorithm == CC_ALGO_NSCC:
            if not isinstance(config, NsccConfig):
                raise einval(f"CC profile {pid}: {CC_ALGO_NSCC} needs an NsccConfig, got {type(config).__name__}")
            try:
                config.validate()
            except ValueError as exc:
                raise einval(f"CC profile {pid}: {exc}") from None
        if algorithm != self.algorithm or config is not self.cc_config:
            self.generation += 1
        if new == S.INIT:
            self.algorithm, self.algorithm_set, self.cc_config, self.config_set = None, False, None, False
            self.vendor_cfg = b""
        else:
            self.algorithm, self.algorithm_set = algorithm, algorithm_set
            self.cc_config, self.config_set = config, config_set
            self.vendor_cfg = vendor_cfg
        self.state = new

    def query(self, mask: CcProfileAttrMask) -> CcProfileAttr:
        """Return the attributes selected by ``mask``."""
        mask = M(mask)
        out = CcProfileAttr()
        if mask & (M.STATE | M.CUR_STATE):
            out.profile_state = out.cur_profile_state = self.state
        if mask & M.ALGORITHM:
            out.algorithm = self.algorithm
        if mask & M.CONFIG:
            out.cc_config = copy.copy(self.cc_config)  # a copy: changing it changes nothing until modify
        if mask & M.VENDOR_CFG:
            out.vendor_cfg = self.vendor_cfg
        return out
