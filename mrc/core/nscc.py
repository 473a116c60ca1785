"""NSCC (UET 1.0 network-signal congestion control): one window per QP over all its paths.

``NsccConfig`` field names are one-to-one with OCP ``struct mrc_ctl_cc_nscc_cfg`` (units: bytes and
ns).  Inputs: per-ACK ECN echo and queueing delay ``d = rtt - base_rtt`` (RTT with the responder's
service time removed, samples only from packets sent once), trims, losses and timeouts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# the BDP the scaled gains are given for: the UEC reference network's, 100 Gb/s x 12 us (htsim uec.cpp
# initNsccParams: scaling_factor_a = BDP / (100 Gb/s x 12 us)); until 2026-12-06 it was 100 Gb/s x 8 us
# here, and every scaled gain was 1.5 x the reference's (a 100 Gb/s, 12 us network got a = 1.5, not 1)
REFERENCE_BDP_BYTES = 150_000
REFERENCE_RTT_NS = 12_000  # the UEC reference network's RTT (htsim uec.cpp: 100 Gb/s, 12 us)


@dataclass(slots=True)
class NsccConfig:
    """mrc_ctl_cc_nscc_cfg, field for field; the one NSCC configuration type (``mrc.ctl`` re-exports it).

    The defaults are :meth:`defaults` for a 100 Gb/s, 12 us, MTU 4096 network.
    """

    disable_qa: bool = False
    adjust_bytes_threshold: int = 8 * 4096  # B
    adjust_period_threshold: int = 12_000  # ns
    base_rtt: int = 12_000  # ns
    eta: float = 0.15 * 4096  # B added once per adjust period
    fi: float = 5 * 4096  # fair increase: B per RTT when d >= target without ECN
    fi_scale: float = 0.25  # fast increase: B per ACKed B after a window of near-zero delay
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
                   fi_scale=0.25 * max(scale, 1.0), gamma=0.8, max_md_jump=0.5, max_cwnd=int(1.5 * bdp), qa_gate=3,
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
    """The NSCC window state machine (sans-IO: every method takes ``now_ns``).

    Follows the UEC reference simulator's NSCC (htsim ``uec.cpp``: ``updateCwndOnAck_NSCC``,
    ``updateCwndOnNack_NSCC``, ``quick_adapt``, ``fair_increase``, ``proportional_increase``,
    ``fast_increase``, ``multiplicative_decrease``, ``fulfill_adjustment``); docs/protocol.md, "NSCC",
    lists each rule and where we differ ([ours]).  ``inflight``: the QP's bytes in flight when the
    signal came (None: the window stands in for it), the bytes whose congestion signals quick adapt
    ignores after it cut the window.
    """

    __slots__ = (
        "acked_since_adjust",
        "avg_delay",
        "cfg",
        "cwnd",
        "decreases",
        "fast",
        "fi_count",
        "ignore_bytes",
        "inc",
        "last_adjust_ns",
        "last_md_ns",
        "mtu",
        "qa_acked",
        "qa_end_ns",
        "qa_trigger",
        "quick_adapts",
    )

    def __init__(self, cfg: NsccConfig, mtu: int, now_ns: int = 0, initial_cwnd: int | None = None):
        self.cfg = cfg
        self.mtu = mtu
        self.cwnd = float(min(cfg.max_cwnd, initial_cwnd if initial_cwnd else cfg.max_cwnd))
        self.cwnd = max(self.cwnd, float(mtu))
        self.avg_delay = 0.0
        self.inc = 0.0  # increase owed, in bytes, applied at the next adjustment
        self.acked_since_adjust = 0
        self.last_adjust_ns = now_ns
        self.last_md_ns = -(1 << 62)
        # quick adapt: bytes delivered in the running measurement period, its end (None: none started:
        # the first signal starts one), whether a trim or loss asked for a verdict at its end, and what
        # is left of the bytes sent before the last cut, whose congestion signals are ignored
        self.qa_acked = 0
        self.qa_end_ns: int | None = None
        self.qa_trigger = False
        self.ignore_bytes = 0
        self.fi_count = 0  # bytes acknowledged in a row with near-zero queueing delay
        self.fast = False  # fast increase is on
        self.decreases = 0
        self.quick_adapts = 0

    def on_ack(self, now_ns: int, acked: int, delay_ns: int | None, ecn: bool, inflight: int | None = None) -> None:
        """One ACK: ``acked`` newly delivered bytes, queueing delay sample (None if none), ECN echo."""
        cfg = self.cfg
        self.qa_acked += acked
        self.acked_since_adjust += acked
        self.ignore_bytes = max(0, self.ignore_bytes - acked)
        if delay_ns is None:
            d = self.avg_delay
        else:
            d = float(max(0, delay_ns))
            self.avg_delay = d if self.avg_delay == 0.0 else 0.875 * self.avg_delay + 0.125 * d
        if self._quick_adapt(now_ns, False, ecn, d, inflight):
            return
        target = cfg.target_delay
        cw = self.cwnd
        if not ecn:
            if d >= target:  # fair increase: fi bytes per window of ACKed bytes
                self.inc += cfg.fi * acked / cw
            elif not self._fast_increase(acked, d):
                # proportional increase, as the reference's alpha * acked * (target - d) applied / cwnd:
                # alpha = 4 MSS a b / target with b = target / 12 us, and fi = 5 MSS a, so it is
                # 0.8 fi (target - d) / 12 us per window of ACKed bytes -- additive, a few MSS per RTT
                # ([ours]: over max(12 us, target): see docs/protocol.md)
                self.inc += 0.8 * cfg.fi * (target - d) / max(REFERENCE_RTT_NS, target) * acked / cw
        elif d >= target:
            self._multiplicative_decrease(now_ns)
        self._clamp()
        if self.acked_since_adjust > cfg.adjust_bytes_threshold or \
                now_ns - self.last_adjust_ns > cfg.adjust_period_threshold:
            self.cwnd += self.inc
            if now_ns - self.last_adjust_ns >= cfg.adjust_period_threshold:
                self.cwnd += cfg.eta
                self.last_adjust_ns = now_ns
            self.inc = 0.0
            self.acked_since_adjust = 0
            self._clamp()

    def _fast_increase(self, acked: int, d: float) -> bool:
        """Near-zero delay for more than a window of ACKed bytes: the window grows by ``fi_scale`` per
        ACKed byte at once, until the delay rises (the reference's ``fast_increase``; its threshold
        is 1 us, ours 0.1 x target, 0.9 us on its reference network [ours])."""
        if d < 0.1 * self.cfg.target_delay:
            self.fi_count += acked
            if self.fi_count > self.cwnd or self.fast:
                self.cwnd += acked * self.cfg.fi_scale
                self.fast = True
                return True
        else:
            self.fi_count = 0
        self.fast = False
        return False

    def _multiplicative_decrease(self, now_ns: int) -> None:
        """ECN with d >= target: cut by gamma x how far the average delay is past target (at most by
        max_md_jump), at most once per base RTT, and only when the average is past target."""
        cfg = self.cfg
        self.fast = False
        self.fi_count = 0
        avg = self.avg_delay
        if avg > cfg.target_delay and now_ns - self.last_md_ns > cfg.base_rtt:
            factor = max(1.0 - cfg.gamma * (avg - cfg.target_delay) / avg, cfg.max_md_jump)
            self.cwnd = max(float(self.mtu), self.cwnd * factor)
            self.last_md_ns = now_ns
            self.decreases += 1

    def on_trim(self, now_ns: int, nbytes: int | None = None, inflight: int | None = None) -> None:
        """A trim NACK of ``nbytes`` (None: one MTU): feed base_rtt as a delay sample and ask quick
        adapt for a verdict; unless it cut the window (or ignores the signal), shrink by the packet."""
        nb = self.mtu if nbytes is None else nbytes
        self.ignore_bytes = max(0, self.ignore_bytes - nb)
        self.avg_delay = 0.875 * self.avg_delay + 0.125 * self.cfg.base_rtt
        self.qa_trigger = True
        if not self._quick_adapt(now_ns, True, True, 0.0, inflight):
            self.cwnd = max(float(self.mtu), self.cwnd - nb)

    def on_loss(self, now_ns: int, inflight: int | None = None) -> None:
        """A loss found by SACK/RACK: a quick-adapt trigger, as a trim's ([ours]: the reference's
        losses are its NACKs)."""
        self.qa_trigger = True
        self._quick_adapt(now_ns, True, True, 0.0, inflight)

    def on_timeout(self, now_ns: int) -> None:
        """ACK timeout: shrink by one packet, floor one MTU."""
        self.cwnd = max(float(self.mtu), self.cwnd - self.mtu)

    def _quick_adapt(self, now_ns: int, is_loss: bool, signal: bool, d: float, inflight: int | None) -> bool:
        """The reference's ``quick_adapt``, called on every ACK, trim and loss.  True: the window was
        cut now, or ``signal`` (an ECN echo, trim or loss) is one to ignore -- the caller does nothing
        more with it.  A measurement period (base_rtt + target) runs from the first call; the first
        call after it ends judges it: if a trim or loss came meanwhile, or this is one, or the delay
        is past qa_threshold, and the bytes delivered in it are below max_cwnd >> qa_gate, the window
        becomes those bytes; then a new period starts.  After a cut, the congestion signals of the bytes
        that were in flight are ignored until as many bytes have been acknowledged or trimmed: they
        tell of the window that was cut (until 2026-12-06 the first ECN echo after a cut cut it again,
        and every single delay sample past qa_threshold, judged against an open-ended period, could
        fire it)."""
        cfg = self.cfg
        if cfg.disable_qa:
            return False
        if signal and self.ignore_bytes > 0:
            self.inc = 0.0
            self.acked_since_adjust = 0
            return True
        if self.qa_end_ns is not None and now_ns <= self.qa_end_ns:
            return False
        done = False
        achieved = self.qa_acked
        if self.qa_end_ns is not None and (self.qa_trigger or is_loss or d > cfg.qa_threshold) \
                and achieved < (cfg.max_cwnd >> cfg.qa_gate):
            self.qa_trigger = False
            # it only ever lowers the window (the reference would raise one below what was achieved)
            if achieved < self.cwnd:
                before = self.cwnd
                self.cwnd = float(max(achieved, self.mtu))
                self.ignore_bytes = int(before) if inflight is None else max(0, inflight)
                self.quick_adapts += 1
                done = True
        self.qa_acked = 0
        self.qa_end_ns = now_ns + cfg.base_rtt + cfg.target_delay
        if done:
            self.inc = 0.0
            self.acked_since_adjust = 0
        return done

    def reconfigure(self, cfg: NsccConfig) -> None:
        """Run on from now with ``cfg`` (a CC profile changed while ONLINE): the window keeps its
        value, clamped into the new limits."""
        self.cfg = cfg
        self._clamp()

    def _clamp(self) -> None:
        self.cwnd = min(max(self.cwnd, float(self.mtu)), float(self.cfg.max_cwnd))
