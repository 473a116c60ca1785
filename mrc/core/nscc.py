"""NSCC (UET 1.0 network-signal congestion control): one window per QP over all its paths.

``NsccConfig`` field names are one-to-one with OCP ``struct mrc_ctl_cc_nscc_cfg`` (units: bytes and
ns).  Inputs: per-ACK ECN echo and queueing delay ``d = rtt - base_rtt`` (RTT with the responder's
service time removed, samples only from packets sent once), trims, losses and timeouts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

REFERENCE_BDP_BYTES = 100_000  # [ours] the BDP the scaled gains are given for: 100 Gb/s x 8 us


@dataclass(slots=True)
class NsccConfig:
    """mrc_ctl_cc_nscc_cfg, field for field; the one NSCC configuration type (``mrc.ctl`` re-exports it).

    The defaults are :meth:`defaults` for a 100 Gb/s, 12 us, MTU 4096 network.
    """

    disable_qa: bool = False
    adjust_bytes_threshold: int = 8 * 4096  # B
    adjust_period_threshold: int = 12_000  # ns
    base_rtt: int = 12_000  # ns
    eta: float = 0.15 * 4096 * 1.5  # B added once per adjust period
    fi: float = 5 * 4096 * 1.5  # fair increase: B per RTT when d >= target without ECN
    fi_scale: float = 0.25  # proportional increase gain when d < target without ECN
    gamma: float = 0.8
    max_md_jump: float = 0.5
    max_cwnd: int = 225_000  # B
    qa_gate: int = 3
    qa_threshold: int = 36_000  # ns
    target_delay: int = 9_000  # ns

    @classmethod
    def defaults(cls, base_rtt_ns: int, rate_bps: float, mtu: int, trimming: bool = True, *,
                 scale_gains: bool = True, tx_ns: int = 0) -> NsccConfig:
        """The UET 1.0 default shape for a path set of total ``rate_bps`` and ``base_rtt_ns``.  The
        increase gains (``eta``, ``fi``) grow with the BDP beyond :data:`REFERENCE_BDP_BYTES`, so a
        larger BDP converges in as many RTTs; ``scale_gains=False`` keeps them at the reference's.
        ``tx_ns``: one packet's transmission time at a NIC port's rate, when ``base_rtt_ns`` is a
        measured RTT that lacks it; the BDP (so ``max_cwnd``) is taken over ``base_rtt_ns + tx_ns``, as
        UET's base RTT includes a packet's transmission time ([ours]: see NsccControl)."""
        bdp = max(mtu, int(rate_bps / 8 * (base_rtt_ns + tx_ns) / 1e9))
        scale = bdp / REFERENCE_BDP_BYTES if scale_gains else 1.0
        target = int(0.75 * base_rtt_ns) if trimming else base_rtt_ns
        return cls(disable_qa=False, adjust_bytes_threshold=8 * mtu, adjust_period_threshold=base_rtt_ns,
                   base_rtt=base_rtt_ns, eta=0.15 * mtu * max(scale, 1.0), fi=5 * mtu * max(scale, 1.0),
                   fi_scale=0.25, gamma=0.8, max_md_jump=0.5, max_cwnd=int(1.5 * bdp), qa_gate=3,
                   qa_threshold=4 * target, target_delay=target)

    @classmethod
    def for_network(cls, base_rtt_ns: int, link_gbps: float, mtu: int = 4096, *, trimming: bool = True,
                    **overrides: object) -> NsccConfig:
        """:meth:`defaults` with the rate in Gb/s, then ``overrides`` (validated); ValueError if bad."""
        if base_rtt_ns <= 0 or link_gbps <= 0 or mtu <= 0:
            raise ValueError("base_rtt_ns, link_gbps and mtu must be positive")
        cfg = cls.defaults(base_rtt_ns, link_gbps * 1e9, mtu, trimming)
        return cfg.replace(**overrides) if overrides else cfg

    def replace(self, **changes: object) -> NsccConfig:
        """A copy with some parameters changed; ValueError on an unknown or unusable parameter."""
        names = set(self.__slots__)
        bad = set(changes) - names
        if bad:
            raise ValueError(f"unknown NSCC parameter(s): {', '.join(sorted(bad))}")
        cfg = NsccConfig(**({n: getattr(self, n) for n in self.__slots__} | changes))  # type: ignore[arg-type]
        cfg.validate()
        return cfg

    def validate(self) -> None:
        """ValueError on a parameter no NSCC could run with (the C struct's ranges)."""
        for name in ("adjust_bytes_threshold", "adjust_period_threshold", "base_rtt", "max_cwnd",
                     "qa_threshold", "target_delay"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or not 0 < v < 1 << 32:
                raise ValueError(f"NSCC {name}={v!r} must be a positive uint32")
        if not 0 < self.gamma <= 1:
            raise ValueError(f"NSCC gamma={self.gamma} must be in (0, 1]")
        if not 0 < self.max_md_jump <= 1:
            raise ValueError(f"NSCC max_md_jump={self.max_md_jump} must be in (0, 1]")
        for name in ("eta", "fi", "fi_scale"):
            v = getattr(self, name)
            # finite: a NaN gain made the window NaN for good (one packet in flight); until 2026-12-06 only
            # the sign was checked
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise ValueError(f"NSCC {name}={v!r} must be a finite number, not negative")
        q = self.qa_gate
        if isinstance(q, bool) or not isinstance(q, int) or not 0 <= q < 32:
            # an integer: it shifts max_cwnd (2.5 passed, and the first quick-adapt check raised TypeError)
            raise ValueError(f"NSCC qa_gate={q!r} must be an integer in 0..31 (a shift of max_cwnd)")
        if not isinstance(self.disable_qa, bool):
            raise ValueError(f"NSCC disable_qa={self.disable_qa!r} must be a boolean")  # noqa: TRY004 -- callers take ValueError


class Nscc:
    """The NSCC window state machine (sans-IO: every method takes ``now_ns``)."""

    __slots__ = (
        "acked_since_adjust",
        "avg_delay",
        "cfg",
        "cwnd",
        "decreases",
        "inc",
        "last_adjust_ns",
        "last_md_ns",
        "last_qa_ns",
        "mtu",
        "near_zero_bytes",
        "qa_acked",
        "qa_start_ns",
        "quick_adapts",
    )

    def __init__(self, cfg: NsccConfig, mtu: int, now_ns: int = 0, initial_cwnd: int | None = None):
        self.cfg = cfg
        self.mtu = mtu
        self.cwnd = float(min(cfg.max_cwnd, initial_cwnd if initial_cwnd else cfg.max_cwnd))
        self.cwnd = max(self.cwnd, float(mtu))
        self.avg_delay = 0.0
        self.inc = 0.0
        self.acked_since_adjust = 0
        self.last_adjust_ns = now_ns
        self.last_md_ns = -(1 << 62)
        self.last_qa_ns = -(1 << 62)
        self.qa_acked = 0
        self.qa_start_ns = now_ns
        self.near_zero_bytes = 0
        self.decreases = 0
        self.quick_adapts = 0

    def on_ack(self, now_ns: int, acked: int, delay_ns: int | None, ecn: bool) -> None:
        """One ACK: ``acked`` newly delivered bytes, queueing delay sample (None if none), ECN echo."""
        cfg = self.cfg
        self.qa_acked += acked
        self.acked_since_adjust += acked
        if delay_ns is None:
            d = self.avg_delay
        else:
            d = float(max(0, delay_ns))
            self.avg_delay = d if self.avg_delay == 0.0 else 0.875 * self.avg_delay + 0.125 * d
        if d > cfg.qa_threshold and self._quick_adapt(now_ns):
            return
        target = cfg.target_delay
        cw = self.cwnd
        if not ecn:
            if d < target:
                self.inc += cfg.fi_scale * (target - d) / target * acked
                if d < 0.1 * target:  # fast increase: near-zero delay for a whole window
                    self.near_zero_bytes += acked
                    if self.near_zero_bytes >= cw:
                        self.inc += cw
                        self.near_zero_bytes = 0
                else:
                    self.near_zero_bytes = 0
            else:
                self.near_zero_bytes = 0
                self.inc += cfg.fi * acked / cw
        else:
            self.near_zero_bytes = 0
            if d >= target and now_ns - self.last_md_ns >= cfg.base_rtt:
                avg = max(self.avg_delay, d, 1.0)
                factor = max(1.0 - cfg.gamma * (avg - target) / avg, cfg.max_md_jump)
                self.cwnd = max(float(self.mtu), cw * factor)
                self.last_md_ns = now_ns
                self.decreases += 1
                self.inc = 0.0
        if self.acked_since_adjust >= cfg.adjust_bytes_threshold or \
                now_ns - self.last_adjust_ns >= cfg.adjust_period_threshold:
            self.cwnd += self.inc
            if now_ns - self.last_adjust_ns >= cfg.adjust_period_threshold:
                self.cwnd += cfg.eta
                self.last_adjust_ns = now_ns
            self.inc = 0.0
            self.acked_since_adjust = 0
            self._clamp()

    def on_trim(self, now_ns: int) -> None:
        """A trim NACK: feed base_rtt as a delay sample, then quick-adapt, else shrink by one packet."""
        self.avg_delay = 0.875 * self.avg_delay + 0.125 * self.cfg.base_rtt
        if not self._quick_adapt(now_ns):
            self.cwnd = max(float(self.mtu), self.cwnd - self.mtu)

    def on_loss(self, now_ns: int) -> None:
        """A loss found by SACK/RACK: a quick-adapt opportunity."""
        self._quick_adapt(now_ns)

    def on_timeout(self, now_ns: int) -> None:
        """ACK timeout: shrink by one packet, floor one MTU."""
        self.cwnd = max(float(self.mtu), self.cwnd - self.mtu)

    def _quick_adapt(self, now_ns: int) -> bool:
        cfg = self.cfg
        if cfg.disable_qa:
            return False
        period = cfg.base_rtt + cfg.target_delay
        if now_ns - self.last_qa_ns < period:
            return False
        achieved = self.qa_acked
        if now_ns - self.qa_start_ns < period:
            # the measurement has not run a whole period yet (the first one after the QP started): let
            # it run on.  Restarting it here, as until 2026-12-06, meant that triggers coming more often
            # than once per period from the start -- the trims and losses of an incast -- kept it from
            # ever completing, and quick adapt never fired
            return False
        self.qa_acked = 0
        self.qa_start_ns = now_ns
        self.last_qa_ns = now_ns
        # a reaction to congestion only ever lowers the window (as the UEC reference simulator's: it
        # leaves a window below what was achieved alone); until 2026-12-06 a loss could raise it
        if achieved < (cfg.max_cwnd >> cfg.qa_gate) and achieved < self.cwnd:
            self.cwnd = float(max(achieved, self.mtu))
            self.inc = 0.0
            self.quick_adapts += 1
            return True
        return False

    def reconfigure(self, cfg: NsccConfig) -> None:
        """Run on from now with ``cfg`` (a CC profile changed while ONLINE): the window keeps its
        value, clamped into the new limits."""
        self.cfg = cfg
        self._clamp()

    def _clamp(self) -> None:
        self.cwnd = min(max(self.cwnd, float(self.mtu)), float(self.cfg.max_cwnd))
