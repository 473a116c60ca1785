"""CC profiles and the NSCC configuration (struct mrc_ctl_cc_nscc_cfg) with its documented defaults."""

from __future__ import annotations

import errno
from collections.abc import Callable
from dataclasses import dataclass, fields

from .constants import CC_ALGO_NSCC, AttrOpt, CcProfileAttrMask, ProfileState
from .errors import MrcCtlError, einval
from .fmt_profile import check_transition
from .types import CcProfileAttr, DeviceAttr

M = CcProfileAttrMask
S = ProfileState

# [ours, shared with mrc.core.nscc] reference BDP of the scaled NSCC gains: 100 Gb/s x 8 us.
REFERENCE_BDP_BYTES = 100_000


@dataclass(frozen=True)
class NsccConfig:
    """struct mrc_ctl_cc_nscc_cfg, field for field (units in the names' comments: bytes and ns)."""

    disable_qa: bool = False
    adjust_bytes_threshold: int = 8 * 4096  # B; default 8 MTU
    adjust_period_threshold: int = 12_000  # ns; default base_rtt
    base_rtt: int = 12_000  # ns
    eta: float = 0.15 * 4096 * 1.5  # B added once per adjust period
    fi: float = 5.0 * 4096 * 1.5  # B, fair increase
    fi_scale: float = 0.25
    gamma: float = 0.8
    max_md_jump: float = 0.5
    max_cwnd: int = 225_000  # B; default 1.5 BDP
    qa_gate: int = 3
    qa_threshold: int = 36_000  # ns; default 4 x target_delay
    target_delay: int = 9_000  # ns; default 0.75 base_rtt with trimming

    @classmethod
    def for_network(cls, base_rtt_ns: int, link_gbps: float, mtu: int = 4096, *, trimming: bool = True,
                    **overrides: object) -> NsccConfig:
        """Defaults of MRC_PROTOCOL.md §6 for one network: BDP = rate x base RTT.

        target_delay = 0.75 base_rtt with trimming (base_rtt without [ours]); adjust_bytes = 8 MTU;
        adjust_period = base_rtt; max_cwnd = 1.5 BDP; gamma 0.8; max_md_jump 0.5; qa_gate 3;
        [ours, identical to mrc.core.nscc.NsccConfig.defaults] qa_threshold = 4 target_delay,
        fi_scale = 0.25, eta = 0.15 MTU and fi = 5 MTU each times max(1, BDP / 100 kB).
        """
        if base_rtt_ns <= 0 or link_gbps <= 0 or mtu <= 0:
            raise einval("base_rtt_ns, link_gbps and mtu must be positive")
        bdp = max(mtu, int(link_gbps * base_rtt_ns / 8))  # Gb/s x ns / 8 = bytes
        scale = max(1.0, bdp / REFERENCE_BDP_BYTES)
        target = round(0.75 * base_rtt_ns) if trimming else base_rtt_ns
        cfg = cls(
            disable_qa=False,
            adjust_bytes_threshold=8 * mtu,
            adjust_period_threshold=base_rtt_ns,
            base_rtt=base_rtt_ns,
            eta=0.15 * mtu * scale,
            fi=5.0 * mtu * scale,
            fi_scale=0.25,
            gamma=0.8,
            max_md_jump=0.5,
            max_cwnd=int(1.5 * bdp),
            qa_gate=3,
            qa_threshold=4 * target,
            target_delay=target,
        )
        return cfg.replace(**overrides) if overrides else cfg

    def replace(self, **changes: object) -> NsccConfig:
        """A copy with some parameters changed (validated)."""
        names = {f.name for f in fields(self)}
        bad = set(changes) - names
        if bad:
            raise einval(f"unknown NSCC parameter(s): {', '.join(sorted(bad))}")
        values = {f.name: getattr(self, f.name) for f in fields(self)} | changes
        cfg = NsccConfig(**values)  # type: ignore[arg-type]
        cfg.validate()
        return cfg

    def validate(self) -> None:
        """EINVAL on a parameter no NSCC could run with."""
        for name in ("adjust_bytes_threshold", "adjust_period_threshold", "base_rtt", "max_cwnd",
                     "qa_threshold", "target_delay"):
            v = getattr(self, name)
            if not isinstance(v, int) or not 0 < v < 1 << 32:
                raise einval(f"NSCC {name}={v!r} must be a positive uint32")
        if not 0 < self.gamma <= 1:
            raise einval(f"NSCC gamma={self.gamma} must be in (0, 1]")
        if not 0 < self.max_md_jump <= 1:
            raise einval(f"NSCC max_md_jump={self.max_md_jump} must be in (0, 1]")
        for name in ("eta", "fi", "fi_scale"):
            if getattr(self, name) < 0:
                raise einval(f"NSCC {name} must not be negative")
        if not 0 <= self.qa_gate < 32:
            raise einval(f"NSCC qa_gate={self.qa_gate} must be in 0..31 (a shift of max_cwnd)")


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

    def modify(self, attr: CcProfileAttr, mask: CcProfileAttrMask) -> None:
        """Apply ``attr`` under ``mask``: to OFFLINE needs ALGORITHM, to ONLINE needs CONFIG."""
        mask = M(mask)
        pid = self.profile_id
        if mask & M.CUR_STATE:
            raise einval(f"CC profile {pid}: CUR_STATE is read-only")
        cur = self.state
        new = ProfileState(attr.profile_state) if mask & M.STATE else cur
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
        config, config_set = self.cc_config, self.config_set
        if mask & M.CONFIG:
            config, config_set = attr.cc_config, True
        if cur == S.INIT and new == S.OFFLINE and not algorithm_set:
            raise einval(f"CC profile {pid}: INIT -> OFFLINE requires ALGORITHM")
        if new == S.ONLINE and not config_set and algorithm is not None:
            raise einval(f"CC profile {pid}: ONLINE requires CONFIG")
        if config_set and algorithm == CC_ALGO_NSCC:
            if not isinstance(config, NsccConfig):
                raise einval(f"CC profile {pid}: {CC_ALGO_NSCC} needs an NsccConfig, got {type(config).__name__}")
            config.validate()
        if new == S.INIT:
            self.algorithm, self.algorithm_set, self.cc_config, self.config_set = None, False, None, False
            self.vendor_cfg = b""
        else:
            self.algorithm, self.algorithm_set = algorithm, algorithm_set
            self.cc_config, self.config_set = config, config_set
            if mask & M.VENDOR_CFG:
                self.vendor_cfg = bytes(attr.vendor_cfg)
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
            out.cc_config = self.cc_config
        if mask & M.VENDOR_CFG:
            out.vendor_cfg = self.vendor_cfg
        return out
