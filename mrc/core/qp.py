"""One queue pair: the QP state machine (RST -> INIT -> RTR -> RTS -> ERR) around a requester and a
responder, with MRC's or classic RC's loss/ack policy.

The layers (docs/protocol.md, "Module layout"):

* :mod:`mrc.core.requester` / :mod:`mrc.core.responder` -- the send and receive state machines
  common to both modes (segmentation, window, completions, RTO; placement, duplicate suppression,
  ordered completions, ACK coalescing);
* :mod:`mrc.core.mrc_policy` -- MRC: spraying, SACK/trim/ECN echoes, RACK, EV retirement, probes;
  :mod:`mrc.core.rc_policy` -- RC: one path, in order only, go-back-N, CNPs;
* :mod:`mrc.core.host` -- :class:`~mrc.core.host.QpHost`, all a QP needs from its endpoint (send a
  frame, port clocks, completions, memory, paths).

PSNs are unwrapped 64-bit sequence numbers inside (:mod:`mrc.core.psn`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mrc.core.cc import CongestionControl, DcqcnConfig
from mrc.core.ev import EvEntry, EvSet
from mrc.core.host import QpHost
from mrc.core.memory import PayloadSource
from mrc.core.mrc_policy import MrcRequester, MrcResponder
from mrc.core.nscc import NsccConfig
from mrc.core.psn import INFINITE_EXP_RETRIES, INFINITE_RNR_RETRY, unwrap
from mrc.core.rc_policy import RcRequester, RcResponder
from mrc.core.requester import Requester
from mrc.core.responder import Responder
from mrc.core.types import QpCounters, QpState, WcStatus
from mrc.wire import formats as F
from mrc.wire.codec import Encap, Frame

MODE_MRC = "mrc"
MODE_RC = "rc"

__all__ = ["INFINITE_EXP_RETRIES", "MODE_MRC", "MODE_RC", "QpAttr", "QueuePair", "unwrap"]


PATH_MTUS = (256, 512, 1024, 2048, 4096, 8192)  # the QP path MTUs (mrc.h: IBV_MTU_* and 8192)


@dataclass(slots=True)
class QpAttr:
    """QP attributes (mrc.h names where they exist)."""

    mode: str = MODE_MRC
    mtu: int = 4096
    mpr: int = 8  # window of PSNs tracked, in units of 128
    max_wimm: int = 64  # outstanding WRITE_WITH_IMM we send
    max_wimm_dest: int = 64  # un-polled immediate completions we accept
    ack_timeout: int = 10  # t: timeout = 1.024 us * 2^t (t <= 24)
    retry_cnt: int = 7  # linear retries (<= 7)
    exp_retry_cnt: int = 7  # exponential retries (<= 25; 25 = infinite)
    # receiver not ready (IB's RNR NAK; MRC's rides in a SACK, docs/protocol.md).  min_rnr_timer is the
    # responder's: the timer code (F.RNR_TIMER_US; 12 = 0.64 ms, as perftest sets it) its RNR NAKs carry;
    # rnr_retry the requester's: RNR NAKs in a row without progress before RNR_RETRY_EXC_ERR (7 = infinite)
    min_rnr_timer: int = 12
    rnr_retry: int = 7
    ev_min_active: int = 1  # the private profile's floor; a bound EV profile has its own
    probe_good_count: int = 3  # k answers in a row bring an ASSUMED_BAD EV back to GOOD
    probe_interval_ns: int = 0  # ASSUMED_BAD probe period; 0: max(4 x srtt, probe_min_ns), the ACK timeout before an RTT sample
    probe_min_ns: int = 1_000_000  # floor of the automatic probe period (an srtt of a few us must not flood the fabric)
    probe_pad_to_mtu: bool = True  # the streak's last probe is as large as a full-MTU data frame of its EV (docs/protocol.md)
    ack_every: int = 4  # responder coalesces this many packets per ACK
    ack_delay_ns: int = 2_000  # ...or acknowledges after this long
    reorder_min_ns: int = 2_000  # floor of the RACK reordering window
    reorder_adapt: bool = True  # widen the window when a loss verdict proves spurious (RFC 8985 6.2)
    # MRC: DSCP of a packet resent after a loss verdict (RACK, timeout), which mrc_switch.p4 queues ahead
    # of the data queue (docs/protocol.md); None: the EV's own DSCP, as for a trimmed packet's resend
    resend_dscp: int | None = F.DSCP_RESEND
    # MRC: the trimmed packet that holds the cumulative ACK is resent with resend_dscp (not as data) from
    # this trim of it on (docs/protocol.md, "Resent data"); 0: never, every trim's resend goes as data
    trim_ahead_after: int = 2
    # congestion control (mrc.core.cc): "nscc" | "dcqcn" | "none", a config object, or None (= "none")
    cc: str | NsccConfig | DcqcnConfig | CongestionControl | None = None
    cc_base_rtt_ns: int = 0  # the fabric's base RTT if known; 0: NSCC learns it from the smallest RTT sample
    cc_learn_base_rtt: bool = False  # an NsccConfig in cc: its base_rtt is a guess to learn (set from a CC profile)
    cnp_interval_ns: int = 50_000  # responder: at most one CNP per this long per QP (RoCE NP default: 50 us)
    # the QP's P_Key (bit 15: full member; low 15 bits: the partition): in the BTH of everything the QP
    # sends; data, ACKs and CNPs for the QP whose P_Key does not match it are dropped (pkey_violations)
    pkey: int = F.DEFAULT_PKEY
    ev_profile_id: int | None = None  # mrc.h MRC_EV_PROFILE_ID: an ONLINE mrc.ctl EV profile of the endpoint
    cc_profile_id: int | None = None  # mrc.h MRC_CC_PROFILE_ID: an ONLINE mrc.ctl CC profile of the endpoint

    def validate(self) -> None:
        """Raise ValueError on attributes outside what mrc.h allows."""
        if self.mode not in (MODE_MRC, MODE_RC):
            raise ValueError(f"mode must be 'mrc' or 'rc', not {self.mode!r}")
        if self.mtu not in PATH_MTUS:
            raise ValueError(f"mtu must be one of {', '.join(map(str, PATH_MTUS))}")
        if not 1 <= self.mpr <= 1024:
            raise ValueError("mpr must be 1..1024 (units of 128 PSNs)")
        if not 0 <= self.ack_timeout <= 24:
            raise ValueError("ack_timeout t must be 0..24")
        if not 0 <= self.retry_cnt <= 7:
            raise ValueError("retry_cnt must be 0..7")
        if not 0 <= self.exp_retry_cnt <= 25:
            raise ValueError("exp_retry_cnt must be 0..25 (25 = infinite)")
        if not 0 <= self.min_rnr_timer < len(F.RNR_TIMER_US):
            raise ValueError("min_rnr_timer must be an IB RNR timer code, 0..31")
        if not 0 <= self.rnr_retry <= INFINITE_RNR_RETRY:
            raise ValueError(f"rnr_retry must be 0..{INFINITE_RNR_RETRY} ({INFINITE_RNR_RETRY} = infinite)")
        if not 0 <= self.pkey <= 0xFFFF or not self.pkey & F.PKEY_PARTITION_MASK:
            raise ValueError(f"pkey must be a 16-bit P_Key with a partition (low 15 bits) other than 0, "
                             f"not {self.pkey!r}")
        if self.max_wimm < 1 or self.max_wimm_dest < 1:
            raise ValueError("max_wimm and max_wimm_dest must be >= 1")
        if self.probe_interval_ns < 0 or self.probe_min_ns < 0:
            raise ValueError("probe_interval_ns and probe_min_ns must be >= 0")
        if self.resend_dscp is not None and not 0 <= self.resend_dscp <= 63:
            raise ValueError("resend_dscp must be a DSCP (0..63) or None")
        if self.resend_dscp == F.DSCP_TRIMMED:
            raise ValueError(f"resend_dscp {F.DSCP_TRIMMED} is the trimmed mark: a WRITE with it is taken for a "
                             "trimmed packet (never placed, trim-NACKed)")
        if self.trim_ahead_after < 0:
            raise ValueError("trim_ahead_after must be >= 0 (0: never)")
        if isinstance(self.cc, str) and self.cc not in ("nscc", "dcqcn", "none"):
            raise ValueError(f"cc must be nscc, dcqcn or none, not {self.cc!r}")
        if isinstance(self.cc, (NsccConfig, DcqcnConfig)):  # a config given here is checked as a CC profile's is
            self.cc.validate()


@dataclass(slots=True)
class _Remote:
    qpn: int = 0
    gid: bytes = b""
    entropy_index: dict = field(default_factory=dict)


def _forward(side: str, name: str, doc: str) -> property:
    """A read-only property of ``QueuePair`` that reads ``name`` from its requester or responder."""
    return property(lambda self: getattr(getattr(self, side), name), doc=doc)


class QueuePair:
    """A reliable-connection QP driven by its endpoint (any :class:`~mrc.core.host.QpHost`).

    The QP keeps what both directions share (state, attributes, EVs, peer, counters) and hands each
    event to its :attr:`requester` or :attr:`responder`, whose classes are the mode's policy.
    """

    def __init__(self, host: QpHost, qpn: int, attr: QpAttr, evs: list[EvEntry], profile: Any = None,
                 cc_profile: Any = None):
        attr.validate()
        self.host = host
        self.qpn = qpn
        self.attr = attr
        self.rc = attr.mode == MODE_RC
        self.state = QpState.RST
        self.counters = QpCounters()
        self.evset = EvSet(qpn, evs, attr.ev_min_active, profile, self.counters)
        self.remote = _Remote()
        self.window = attr.mpr * 128
        self.peer_down: set[int] = set()  # the peer's NIC ports its last PORT_STATUS reported down
        # the bound mrc.ctl CC profile (algorithm, cc_config, generation) or None: QpAttr.cc is its
        # config, re-read whenever the profile's generation moves (a CONFIG change while ONLINE)
        self.cc_profile = cc_profile
        self.cc_gen = cc_profile.generation if cc_profile is not None else 0
        req, resp = (RcRequester, RcResponder) if self.rc else (MrcRequester, MrcResponder)
        self.requester: Requester = req(self)
        self.responder: Responder = resp(self)

    def set_peer_down(self, down: set[int]) -> None:
        """The peer's NIC ports now known down (a PORT_STATUS, or a probe answered on one of them); the
        spray skips ours and the peer's down ports alike (``ports_down_changed``)."""
        self.peer_down = down
        self.ports_down_changed()

    def ports_down_changed(self) -> None:
        """Our endpoint's or the peer's down ports changed: the EV set skips both."""
        self.evset.ports_down = self.host.ports_down | self.peer_down

    # ------------------------------------------------------------------ state machine
    def modify_to_init(self) -> None:
        self._expect(QpState.RST)
        self.state = QpState.INIT

    def modify_to_rtr(self, remote_qpn: int, remote_gid: bytes, rq_psn: int) -> None:
        """Learn the peer (QPN, GID) and the first PSN we expect; build the per-EV encapsulations."""
        self._expect(QpState.INIT)
        self.remote.qpn = remote_qpn & F.QPN_MASK
        self.remote.gid = bytes(remote_gid)
        self.responder.start(rq_psn)
        self._build_encaps()
        self.host.register_peer(self)
        self.state = QpState.RTR

    def modify_to_rts(self, sq_psn: int, now_ns: int = 0) -> None:
        """Start sending at ``sq_psn``."""
        self._expect(QpState.RTR)
        self.requester.start(sq_psn, now_ns)
        self.state = QpState.RTS

    def to_error(self, now_ns: int, status: WcStatus) -> None:
        """Move to ERR: the oldest WQE completes with ``status``, the rest are flushed."""
        if self.state is QpState.ERR:
            return
        self.state = QpState.ERR
        self.requester.flush(now_ns, status)
        self.responder.stop()

    def _expect(self, st: QpState) -> None:
        if self.state is not st:
            raise ValueError(f"QP {self.qpn}: transition needs state {st.value}, QP is {self.state.value}")

    # ------------------------------------------------------------------ paths
    def _build_encaps(self) -> None:
        """One encapsulation per EV towards the peer, and the entropy -> EV index map of the responder."""
        self.remote.entropy_index = {}
        for i, e in enumerate(self.evset.entries):
            e.encap = self.host.make_encap(self.remote.gid, e, i)
            self.remote.entropy_index[self._entropy_of(e.encap)] = i
        self.requester.paths_changed()

    def sync_evs(self) -> None:
        """Take the bound profile's REPLACE_EVs (its generation moved) before this QP sends anything:
        data, ACKs, probes or probe answers all go on the profile's current EVs (docs/mrc_ctl.md)."""
        if self.evset.gen != self.evset.prof.generation:
            self._sync_evs()

    def _sync_evs(self) -> None:
        """The profile replaced EV slots (REPLACE_EV on an ONLINE profile): take the new values."""
        evset = self.evset
        prof = evset.prof
        evset.gen = prof.generation
        before = [(e.ev, e.port) for e in evset.entries]
        self.host.refresh_entries(self)
        evset.refresh_ports()
        if self.remote.gid:
            self._build_encaps()
        replaced = [i for i, e in enumerate(evset.entries) if (e.ev, e.port) != before[i]]
        if replaced:
            self.requester.paths_replaced(replaced)

    @staticmethod
    def _entropy_of(encap: Encap) -> int:
        return (encap.sport << 16) | (encap.flow_label & 0xFFFF)

    def ev_index_of(self, fr: Frame) -> int:
        """Which of our EVs mirrors the path a packet came on (SRv6: index in the inner sport)."""
        return self.ev_index_of_entropy(fr.entropy)

    def ev_index_of_entropy(self, entropy: int) -> int:
        """Which of our EVs has this 32-bit entropy (``sport << 16 | flow label``): the index a packet
        came on, or, for an ACK's ``ev_echo``, the EV our packet that triggered it took; -1 if none."""
        sport = entropy >> 16
        if sport >= F.SRV6_INNER_SPORT_BASE and self.host.encap_mode == "srv6":
            return sport & 0x3FFF
        return self.remote.entropy_index.get(entropy, -1)

    # ------------------------------------------------------------------ what the endpoint calls
    def post_write(self, wr_id: int, data: bytes | memoryview | PayloadSource, remote_va: int, rkey: int,
                   imm: int | None = None) -> None:
        """Queue an RDMA WRITE (with immediate if ``imm`` is not None)."""
        self.requester.post_write(wr_id, data, remote_va, rkey, imm)

    def has_work(self) -> bool:
        """True if the requester has packets to send (new or resent)."""
        return self.requester.has_work()

    def fill(self, now_ns: int, budget: int = 0) -> int:
        """Send what the window, the ports and the CC allow now (at most ``budget`` packets, 0: no
        limit) through the host; returns how many."""
        if self.state is QpState.RTS and self.evset.gen != self.evset.prof.generation:
            self._sync_evs()
        cp = self.cc_profile
        if cp is not None and cp.generation != self.cc_gen:
            self._sync_cc(now_ns)
        return self.requester.fill(now_ns, budget)

    def on_ack(self, fr: Frame, now_ns: int) -> None:
        """An ACK/NAK/SACK for our requester."""
        self.sync_evs()
        cp = self.cc_profile
        if cp is not None and cp.generation != self.cc_gen:
            self._sync_cc(now_ns)
        self.requester.on_ack(fr, now_ns)

    def _sync_cc(self, now_ns: int) -> None:
        """The bound CC profile changed (CONFIG modified while ONLINE): take its algorithm and config."""
        cp = self.cc_profile
        self.cc_gen = cp.generation
        self.requester.reconfigure_cc(cp.cc_config if cp.algorithm is not None else None, now_ns)

    def on_cnp(self, now_ns: int) -> None:
        """A CNP for our requester."""
        self.requester.on_cnp(now_ns)

    def on_data(self, fr: Frame, now_ns: int) -> None:
        """A data packet for our responder (its ACK goes on the profile's current EV)."""
        self.sync_evs()
        self.responder.on_data(fr, now_ns)

    def on_probe_resp(self, ev_i: int, rid: int, now_ns: int) -> None:
        """The answer to probe ``rid`` of EV ``ev_i``."""
        self.requester.on_probe_resp(ev_i, rid, now_ns)

    def imm_polled(self) -> None:
        """The application polled one of our immediate completions (frees one receive credit)."""
        self.responder.imm_polled()

    def timer(self) -> int | None:
        """Earliest deadline this QP needs (RTO, tail-loss PTO, ACK coalescing, probes, port wake)."""
        t = self.requester.timer()
        c = self.responder.timer()
        if c is not None and (t is None or c < t):
            t = c
        return t

    def on_timer(self, now_ns: int) -> None:
        """Run the deadlines that have passed: the coalesced ACK first, then the send side's."""
        self.sync_evs()
        self.responder.on_timer(now_ns)
        self.requester.on_timer(now_ns)

    # ------------------------------------------------------------------ state, read by tools and tests
    @property
    def cc(self) -> CongestionControl | None:
        """The requester's congestion control (None before RTS)."""
        return self.requester.cc

    @property
    def srtt(self) -> int:
        """Smoothed RTT (ns), 0 before the first sample."""
        return self.requester.srtt

    @srtt.setter
    def srtt(self, v: int) -> None:
        self.requester.srtt = v

    # read-only views of the two directions' state, for tools and tests that read a QP
    min_rtt = _forward("requester", "min_rtt", "Smallest RTT sample (ns).")
    snd_una = _forward("requester", "snd_una", "Oldest unacknowledged sequence number.")
    snd_nxt = _forward("requester", "snd_nxt", "Next sequence number to send.")
    next_assign = _forward("requester", "next_assign", "First PSN of the next work request.")
    inflight = _forward("requester", "inflight", "Bytes in flight: sent, not acknowledged, not found lost or trimmed.")
    pkts = _forward("requester", "pkts", "Unacknowledged packets by sequence number.")
    rcv_nxt = _forward("responder", "rcv_nxt", "Next sequence number expected in order.")
    wimm_unpolled = _forward("responder", "wimm_unpolled", "Write-with-immediate completions not polled yet.")

    @property
    def reo_mult(self) -> int:
        """MRC's RACK reordering-window multiplier (1 for RC)."""
        return getattr(self.requester, "reo_mult", 1)

    def _probe_interval(self) -> int:
        """MRC's probe period now (tests read it)."""
        return self.requester._probe_interval()

    @property
    def _retire_ev(self):
        """MRC's EV retirement (tests wrap it to watch what it resends)."""
        return self.requester._retire_ev

    @_retire_ev.setter
    def _retire_ev(self, fn) -> None:
        self.requester._retire_ev = fn
