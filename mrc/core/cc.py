"""Congestion control as one interface: signals in, a window and a pacing rate out.

The QP reports what it learns (:meth:`CongestionControl.on_ack` with the newly delivered bytes, an
RTT sample and the ECN echo; trims; losses; timeouts; CNPs; bytes sent) and asks two questions
before it sends a data packet: :meth:`CongestionControl.window` (bytes allowed in flight, None = no
limit) and :meth:`CongestionControl.rate_bps` (the QP's pacing rate, None = the NIC port's rate).
Three implementations:

* :class:`NsccControl` -- UET 1.0 NSCC (mrc_ctl ``uet-1.0-nscc``, :mod:`mrc.core.nscc`): a window
  over all paths of the QP, driven by queueing delay, ECN echoes and trims.  The MRC default.
* :class:`Dcqcn` -- DCQCN, the rate-based algorithm RoCE NICs run (reaction point): each CNP cuts
  the rate by alpha/2 and raises alpha; without CNPs alpha decays, and the rate climbs back in
  fast-recovery, additive-increase and hyper-increase stages driven by a timer and a byte counter.
  The RC baseline's default.
* :class:`NoControl` -- ``none``: no window, NIC port pacing only (experiments).

:func:`make_cc` builds one from what ``QpAttr.cc`` holds (a name, a config object, or None).
Sans-IO like the rest of the core: every call takes ``now_ns``; DCQCN's timers are run lazily when
its rate is read, so it needs no timer of its own.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mrc.core.nscc import Nscc, NsccConfig

CC_NAMES = ("nscc", "dcqcn", "none")
DEFAULT_BASE_RTT_NS = 10_000  # [ours] NSCC's base RTT before the first sample (datacenter scale)
# [ours] our device's reading of an NSCC CC profile's vendor_cfg (mrc_ctl.h leaves its meaning to the
# vendor): byte 0, bit 0 set = the config's base_rtt is a guess; each bound QP learns the base RTT from
# its smallest RTT sample and derives the NSCC limits from it, as the name "nscc" does
VENDOR_CFG_LEARN_BASE_RTT = b"\x01"


class CongestionControl:
    """The interface the QP talks to; the base class is ``none`` (every signal ignored)."""

    name = "none"
    # the QP's bytes in flight, read when a signal comes; the QP sets it when it builds the algorithm
    # (None: not known).  NSCC's quick adapt ignores the congestion signals of the bytes in flight when
    # it cut the window
    inflight_fn: Callable[[], int] | None = None

    def on_ack(self, now_ns: int, acked_bytes: int, rtt_ns: int | None, ecn: bool) -> None:
        """An ACK: ``acked_bytes`` newly delivered, an RTT sample (service time removed, packets
        sent once only) or None, and whether it echoes a CE mark."""

    def on_trim(self, now_ns: int, nbytes: int | None = None) -> None:
        """A trim NACK of a packet of ``nbytes`` payload bytes (None: one MTU): a switch queue was full on
        the path (congestion, not a failed path)."""

    def on_loss(self, now_ns: int) -> None:
        """A packet found lost by SACK/RACK."""

    def on_timeout(self, now_ns: int) -> None:
        """A packet given up on by the retransmission timeout."""

    def on_cnp(self, now_ns: int) -> None:
        """A RoCEv2 congestion notification packet from the responder."""

    def on_sent(self, now_ns: int, nbytes: int) -> None:
        """``nbytes`` of data just left (rate-based algorithms count bytes)."""

    def window(self) -> float | None:
        """Bytes allowed in flight (None: no window)."""
        return None

    def rate_bps(self, now_ns: int) -> float | None:
        """The QP's pacing rate in bit/s (None: as fast as the NIC port)."""
        return None

    def state(self) -> dict[str, Any]:
        """What the algorithm holds now, for counters and --json."""
        return {"cc": self.name}

    def reconfigure(self, spec: Any) -> bool:
        """Take a new configuration in place, keeping what the algorithm has learnt; False if
        ``spec`` is not this algorithm's (the QP then builds a new one with :func:`make_cc`)."""
        return False


class NoControl(CongestionControl):
    """``none``: no window and no rate; the NIC port's pacing is the only limit."""

    def reconfigure(self, spec: Any) -> bool:
        return spec is None or spec == "none"


class NsccControl(CongestionControl):
    """NSCC behind the interface.  ``learn_base_rtt``: the configured base RTT is a guess (a real
    driver does not know its fabric), so the smallest RTT sample seen replaces it and the window
    limits are derived again from it ([ours]; UET configures base_rtt per fabric).  The window
    starts, as NSCC's does, at the configured maximum; at the first sample it keeps its value
    (clamped into the new limits) and grows by NSCC's increase rules (:meth:`_rebase`)."""

    name = "nscc"

    def __init__(self, cfg: NsccConfig, mtu: int, now_ns: int = 0, *, rate_bps: float = 0.0,
                 learn_base_rtt: bool = False, trimming: bool = True, tx_ns: int = 0):
        self.nscc = Nscc(cfg, mtu, now_ns)
        self.mtu = mtu
        self.rate = rate_bps
        self.tx_ns = tx_ns  # one MTU packet's time on a NIC port: added to a learnt base RTT's BDP
        self.learn = learn_base_rtt
        self.trimming = trimming
        self.min_rtt = 0
        self.rebased = False  # the guessed base RTT was replaced by a sample

    @property
    def cfg(self) -> NsccConfig:
        return self.nscc.cfg

    @property
    def cwnd(self) -> float:
        """The window in bytes (also what :meth:`window` returns)."""
        return self.nscc.cwnd

    @property
    def decreases(self) -> int:
        return self.nscc.decreases

    @property
    def quick_adapts(self) -> int:
        return self.nscc.quick_adapts

    def on_ack(self, now_ns: int, acked_bytes: int, rtt_ns: int | None, ecn: bool) -> None:
        if rtt_ns is not None and self.learn and (self.min_rtt == 0 or rtt_ns < self.min_rtt):
            self.min_rtt = max(1, rtt_ns)
            self._rebase(self.min_rtt)
        delay = None if rtt_ns is None else rtt_ns - self.nscc.cfg.base_rtt
        self.nscc.on_ack(now_ns, acked_bytes, delay, ecn, self._inflight())

    def _inflight(self) -> int | None:
        f = self.inflight_fn
        return None if f is None else f()

    def _rebase(self, base_rtt: int) -> None:
        """The limits for the learnt base RTT; the window keeps its value (clamped) and grows from
        there by NSCC's own increase rules [ours].  It used to jump to the new max_cwnd at the first
        sample (NSCC starts at its full window), but that is the NIC's line rate x the learnt RTT, and
        a learnt RTT is long exactly when the path is slow: on the emulated fabric (10 Gb/s ports, 20
        Mb/s links, 5.5 ms RTT) it was 20 MB, so the whole PSN window went out at once, the paths'
        queues filled unevenly and RACK suspected or retired 2-4 healthy EVs (docs/mrc_ctl.md)."""
        n = self.nscc
        self.rebased = True
        # the increase gains stay unscaled (the reference BDP's): they are scaled by line rate x base RTT
        # to converge in as many RTTs on a larger BDP, but a learnt RTT is no evidence of one -- on the
        # emulated fabric the scale was 137 and eta alone added 20 full packets per RTT
        # the BDP over base RTT + one packet's time on a port: UET's base RTT includes the packet's
        # transmission time (the UEC reference simulator adds a data packet's and an ACK's serialisation
        # to the path latency), a learnt one does not -- our pacer spaces the *next* packet by the port
        # rate and the frame itself arrives at once (veth); at 0.25 Gb/s ports and 8 KiB frames that
        # was 262 us missing from a 70 us sample, max_cwnd came to 1.5 packets for 2 ports, and only
        # one port carried a packet at a time
        n.cfg = NsccConfig.defaults(base_rtt, self.rate, self.mtu, self.trimming, scale_gains=False,
                                    tx_ns=self.tx_ns)
        n._clamp()

    def reconfigure(self, spec: Any) -> bool:
        """A new :class:`NsccConfig`: its limits apply at once (the window is clamped into them); the
        configured base RTT is taken as given from then on (no learning)."""
        if not isinstance(spec, NsccConfig):
            return False
        self.learn = False
        self.nscc.reconfigure(spec)
        return True

    def on_trim(self, now_ns: int, nbytes: int | None = None) -> None:
        self.nscc.on_trim(now_ns, nbytes, inflight=self._inflight())

    def on_loss(self, now_ns: int) -> None:
        self.nscc.on_loss(now_ns, self._inflight())

    def on_timeout(self, now_ns: int) -> None:
        self.nscc.on_timeout(now_ns)

    def on_cnp(self, now_ns: int) -> None:  # an ECN echo without an ACK: as a marked ACK of nothing
        self.nscc.on_ack(now_ns, 0, None, True, self._inflight())

    def window(self) -> float | None:
        return self.nscc.cwnd

    def state(self) -> dict[str, Any]:
        n = self.nscc
        return {"cc": self.name, "cwnd": int(n.cwnd), "base_rtt_ns": n.cfg.base_rtt, "decreases": n.decreases,
                "quick_adapts": n.quick_adapts}


@dataclass(slots=True)
class DcqcnConfig:
    """DCQCN reaction-point parameters (names after the DCQCN paper and NIC firmware settings).

    ``g``: alpha gain; ``alpha_period_ns``: alpha decays by (1-g) per period without a CNP (K);
    ``increase_period_ns``: the rate-increase timer (T); ``byte_counter``: bytes sent per
    byte-counter increase event (B); ``fast_recovery_steps``: F; ``rai_bps`` / ``rhai_bps``:
    additive / hyper increase steps; ``min_rate_bps``: floor; ``min_dec_period_ns``: at most one
    rate decrease per this period (the NIC's rate-reduce monitor period).
    """

    line_rate_bps: float
    g: float = 1 / 256
    alpha_period_ns: int = 55_000
    increase_period_ns: int = 55_000
    byte_counter: int = 10 << 20
    fast_recovery_steps: int = 5
    rai_bps: float = 40e6
    rhai_bps: float = 400e6
    min_rate_bps: float = 10e6
    min_dec_period_ns: int = 4_000
    initial_alpha: float = 1.0

    def validate(self) -> None:
        """Raise ValueError on a configuration the reaction point cannot run (a zero line rate divided
        the pacer by zero; a non-finite or out-of-range gain stuck the rate)."""
        rates = (self.line_rate_bps, self.rai_bps, self.rhai_bps, self.min_rate_bps)
        if not all(math.isfinite(r) and r > 0 for r in rates):
            raise ValueError("DCQCN rates (line_rate_bps, rai_bps, rhai_bps, min_rate_bps) must be finite and > 0")
        if self.min_rate_bps > self.line_rate_bps:
            raise ValueError("DCQCN min_rate_bps must not exceed line_rate_bps")
        if not (math.isfinite(self.g) and 0 < self.g <= 1) or not 0 <= self.initial_alpha <= 1:
            raise ValueError("DCQCN g must be in (0, 1] and initial_alpha in [0, 1]")
        if min(self.alpha_period_ns, self.increase_period_ns, self.byte_counter) <= 0 or \
                self.fast_recovery_steps < 0 or self.min_dec_period_ns < 0:
            raise ValueError("DCQCN periods and byte_counter must be > 0, fast_recovery_steps and "
                             "min_dec_period_ns >= 0")

    @classmethod
    def defaults(cls, line_rate_bps: float, base_rtt_ns: int = 0) -> DcqcnConfig:
        """The published shape scaled to this port: increase steps of line/1000 (40 Mb/s at 40 Gb/s)
        and line/100; timers of 55 us, or one base RTT where the RTT is longer ([ours]: an emulated
        fabric with a 35 ms RTT would otherwise raise its rate hundreds of times per round trip
        before a CNP could come back); the byte counter is 10 MiB or a base RTT's worth of line rate,
        whichever is smaller."""
        period = max(55_000, base_rtt_ns)
        bdp = int(line_rate_bps / 8 * max(base_rtt_ns, 55_000) / 1e9)
        return cls(line_rate_bps=line_rate_bps, alpha_period_ns=period, increase_period_ns=period,
                   byte_counter=max(64 << 10, min(10 << 20, bdp)), rai_bps=line_rate_bps / 1000,
                   rhai_bps=line_rate_bps / 100, min_rate_bps=max(line_rate_bps / 1000, 1e3),
                   min_dec_period_ns=max(4_000, base_rtt_ns // 2))


class Dcqcn(CongestionControl):
    """DCQCN reaction point: current rate Rc, target rate Rt, alpha.

    On a CNP (at most one decrease per ``min_dec_period_ns``): Rt = Rc, Rc = Rc (1 - alpha/2),
    alpha = (1-g) alpha + g, and both increase counters restart.  Every ``alpha_period_ns`` without a
    CNP: alpha = (1-g) alpha.  An increase event (timer T expired, or B bytes sent) counts and raises
    Rc: for the first F events of each counter, fast recovery (Rc = (Rt + Rc)/2); when one counter
    is past F, additive increase (Rt += R_AI first); when both are, hyper increase (Rt += i x R_HAI,
    i = events past F).
    The line rate caps both rates.
    """

    name = "dcqcn"

    def __init__(self, cfg: DcqcnConfig, now_ns: int = 0, *, learn_base_rtt: bool = False):
        self.cfg = cfg
        self.learn = learn_base_rtt
        self.min_rtt = 0
        self.rc = cfg.line_rate_bps
        self.rt = cfg.line_rate_bps
        self.alpha = cfg.initial_alpha
        self.timer_count = 0
        self.byte_count = 0
        self.bytes_since = 0
        self.last_cnp_ns = -(1 << 62)
        self.last_dec_ns = -(1 << 62)
        self.alpha_at = now_ns + cfg.alpha_period_ns
        self.inc_at = now_ns + cfg.increase_period_ns
        self.cnps = 0
        self.decreases = 0

    def on_cnp(self, now_ns: int) -> None:
        self._advance(now_ns)
        c = self.cfg
        self.cnps += 1
        self.last_cnp_ns = now_ns
        self.alpha_at = now_ns + c.alpha_period_ns
        if now_ns - self.last_dec_ns < c.min_dec_period_ns:
            return
        self.last_dec_ns = now_ns
        self.decreases += 1
        self.rt = self.rc
        self.rc = max(c.min_rate_bps, self.rc * (1 - self.alpha / 2))
        self.alpha = (1 - c.g) * self.alpha + c.g
        self.timer_count = self.byte_count = self.bytes_since = 0
        self.inc_at = now_ns + c.increase_period_ns

    def on_ack(self, now_ns: int, acked_bytes: int, rtt_ns: int | None, ecn: bool) -> None:
        if rtt_ns is not None and self.learn and (self.min_rtt == 0 or rtt_ns < self.min_rtt):
            # [ours] the timers were set for an unknown RTT: scale them to the smallest RTT seen
            # (DCQCN's 55 us timers assume a fabric RTT of a few us; at a 35 ms RTT they would
            # undo every rate cut long before the next CNP could arrive)
            self.min_rtt = max(1, rtt_ns)
            c = self.cfg
            self.cfg = DcqcnConfig.defaults(c.line_rate_bps, self.min_rtt)
        if ecn:  # an ECN echo carried in an ACK counts as a CNP
            self.on_cnp(now_ns)

    def on_sent(self, now_ns: int, nbytes: int) -> None:
        self.bytes_since += nbytes
        if self.bytes_since >= self.cfg.byte_counter:
            self.bytes_since = 0
            self.byte_count += 1
            self._increase()

    def _advance(self, now_ns: int) -> None:
        """Run the timers that expired up to ``now_ns``: the same rate and alpha however seldom it is
        read.  The alpha decays and the rate increases do not depend on each other, so each is run on
        its own: alpha in closed form, the increases one event each until both rates are at the line
        rate, where more events change nothing.  (Until 2026-12-06 one loop ran at most 64 events of
        both kinds and dropped the rest, "the rate is back at the line rate anyway": a QP cut to its
        floor and then idle for 10 s came back at 2.3 Gb/s of 40, and a QP whose rate was read once
        after 10 ms quiet had 1.05 Gb/s against 7.0 when read every period.)"""
        c = self.cfg
        if self.alpha_at <= now_ns:
            n = (now_ns - self.alpha_at) // c.alpha_period_ns + 1
            self.alpha *= (1 - c.g) ** n
            self.alpha_at += n * c.alpha_period_ns
        if self.inc_at > now_ns:
            return
        n = (now_ns - self.inc_at) // c.increase_period_ns + 1
        self.inc_at += n * c.increase_period_ns
        line = c.line_rate_bps
        for i in range(min(n, 1 << 16)):  # bounded: with R_AI = line/1000, ~1,050 events reach the line
            if self.rt >= line and self.rc >= line * (1 - 1e-12):
                self.rc = line
                self.timer_count += n - i
                return
            self.timer_count += 1
            self._increase()

    def _increase(self) -> None:
        c = self.cfg
        f = c.fast_recovery_steps
        t, b = self.timer_count, self.byte_count
        if t > f and b > f:
            self.rt += (min(t, b) - f) * c.rhai_bps
        elif t > f or b > f:
            self.rt += c.rai_bps
        self.rt = min(self.rt, c.line_rate_bps)
        self.rc = min((self.rt + self.rc) / 2, c.line_rate_bps)

    def rate_bps(self, now_ns: int) -> float | None:
        self._advance(now_ns)
        return self.rc

    def state(self) -> dict[str, Any]:
        return {"cc": self.name, "rate_bps": round(self.rc), "target_bps": round(self.rt),
                "alpha": round(self.alpha, 4), "cnps": self.cnps, "decreases": self.decreases}


def make_cc(spec: Any, *, mtu: int, rate_bps: float, now_ns: int = 0, base_rtt_ns: int = 0,
            trimming: bool = True, learn_base_rtt: bool = False, tx_ns: int = 0) -> CongestionControl:
    """The algorithm ``spec`` names: ``"nscc"`` / ``"dcqcn"`` / ``"none"`` / None, or a config object
    (:class:`~mrc.core.nscc.NsccConfig`, :class:`DcqcnConfig`) or a ready :class:`CongestionControl`.

    ``rate_bps`` is what the QP's NIC ports carry together (the line rate); ``base_rtt_ns`` a known
    base RTT (0: unknown; NSCC then learns it from the smallest RTT sample).  ``learn_base_rtt``: an
    :class:`NsccConfig`'s base RTT is a guess, learnt as the name ``"nscc"`` learns it (a CC profile
    whose vendor_cfg is :data:`VENDOR_CFG_LEARN_BASE_RTT`); its limits are derived, from the start, from
    that guess and this QP's ``rate_bps`` and ``mtu``, as the name's are.  ``tx_ns``: one MTU packet's
    transmission time at a NIC port's rate; a learnt base RTT lacks it, and NSCC's BDP adds it back."""
    if spec is None or spec == "none":
        return NoControl()
    if isinstance(spec, CongestionControl):
        return spec
    if isinstance(spec, NsccConfig):
        if learn_base_rtt:
            # the config is a guess made for the whole endpoint (a CC profile serves QPs over any of its
            # ports, at the MTU it was asked with); every limit is re-derived at the first RTT sample from
            # this QP's own line rate and MTU, so start from them too: exactly the name "nscc"'s window
            spec = NsccConfig.defaults(spec.base_rtt, rate_bps, mtu, trimming, tx_ns=tx_ns)
        return NsccControl(spec, mtu, now_ns, rate_bps=rate_bps, trimming=trimming, learn_base_rtt=learn_base_rtt,
                           tx_ns=tx_ns if learn_base_rtt else 0)
    if isinstance(spec, DcqcnConfig):
        return Dcqcn(spec, now_ns)
    if spec == "nscc":
        base = base_rtt_ns or DEFAULT_BASE_RTT_NS
        tx = 0 if base_rtt_ns else tx_ns  # a configured base RTT is UET's: the transmission time is in it
        return NsccControl(NsccConfig.defaults(base, rate_bps, mtu, trimming, tx_ns=tx), mtu, now_ns,
                           rate_bps=rate_bps, learn_base_rtt=not base_rtt_ns, trimming=trimming, tx_ns=tx)
    if spec == "dcqcn":
        return Dcqcn(DcqcnConfig.defaults(rate_bps, base_rtt_ns), now_ns, learn_base_rtt=not base_rtt_ns)
    raise ValueError(f"congestion control must be one of {', '.join(CC_NAMES)} or a config, not {spec!r}")
