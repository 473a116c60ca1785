"""Plain records the transport core hands out: states, completions, EV events, counters."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import Any


class QpState(enum.Enum):
    """Verbs QP states (RST -> INIT -> RTR -> RTS; any -> ERR)."""

    RST = "RST"
    INIT = "INIT"
    RTR = "RTR"
    RTS = "RTS"
    ERR = "ERR"


class EvState(enum.IntFlag):
    """enum mrc_ctl_ev_state, with the header's values (the one definition; ``mrc.ctl`` re-exports it).

    GOOD and ASSUMED_BAD are the endpoint's verdicts, DENIED the controller's, UNKNOWN the state of
    an unpopulated slot; NONE (0) is the empty event mask.  ``.name`` gives the text form
    ("ASSUMED_BAD") that JSON outputs and logs use.
    """

    NONE = 0
    GOOD = 1 << 0
    ASSUMED_BAD = 1 << 1
    DENIED = 1 << 2
    UNKNOWN = 1 << 31


class WcStatus(enum.Enum):
    """Work completion status (the ibverbs names)."""

    SUCCESS = "SUCCESS"
    RETRY_EXC_ERR = "RETRY_EXC_ERR"
    REM_ACCESS_ERR = "REM_ACCESS_ERR"
    WR_FLUSH_ERR = "WR_FLUSH_ERR"
    RNR_RETRY_EXC_ERR = "RNR_RETRY_EXC_ERR"


class WcOpcode(enum.Enum):
    """What completed: our RDMA WRITE (requester) or an incoming WRITE_WITH_IMM (responder)."""

    RDMA_WRITE = "RDMA_WRITE"
    RECV_RDMA_WITH_IMM = "RECV_RDMA_WITH_IMM"


@dataclass(frozen=True, slots=True)
class Completion:
    """A work completion: requester side for posted writes, responder side for WRITE_WITH_IMM."""

    qpn: int
    wr_id: int
    status: WcStatus
    opcode: WcOpcode
    byte_len: int = 0
    imm: int | None = None
    time_ns: int = 0


@dataclass(frozen=True, slots=True)
class EvEvent:
    """An EV state change: ``struct mrc_ctl_ev_event`` (profile, EV, drop count, new state) plus what
    the transport knows about it (one definition for ``mrc.core`` and ``mrc.ctl``).

    Only transitions into GOOD and ASSUMED_BAD are events.  ``profile_id`` is the EV profile the EV
    belongs to (None for the private profile of a QP created with its own EV list); ``ev`` is the
    profile's EV (an ``mrc.ctl.Ev``: value and port) or, for a private profile, the EV value as given
    to ``create_qp``.  ``qpn`` is the QP whose observation caused the change (0: the controller or a
    port event), ``ev_index`` the slot in the profile's EV array, ``port`` its NIC port.

    ``evidence`` (our extension, not in ``mrc_ctl.h``): what the rule that made the change saw at that
    moment, a small dict whose ``rule`` key names the rule ("fifo", "quiet", "probe", "min_active",
    "port_down", "peer_port_down", "controller") and whose other keys depend on it; durations in ns,
    times as "..._ago_ns" before the event (docs/protocol.md, "Evidence of an EV change").  Built only
    when an EV changes state, never per packet; None when nothing recorded it.
    """

    profile_id: int | None
    ev: Any
    drop_count: int
    state: EvState
    time_ns: int = 0
    qpn: int = 0
    ev_index: int = -1
    port: int = 0
    old_state: EvState = EvState.UNKNOWN
    cause: str = ""
    evidence: dict[str, Any] | None = field(default=None, compare=False)

    @property
    def new_state(self) -> EvState:
        """The state the EV moved to (the same as ``state``)."""
        return self.state


# EV state changes a profile keeps for ``Endpoint.poll_events`` until they are polled: the driver, mrc-perf,
# the agents and the simulator poll, but a library user who never does must not grow a process's memory
# without bound over a long run of faults (one event per transition, each with its evidence dict)
EV_EVENT_BACKLOG = 8192


def keep_event(events: list[EvEvent], e: EvEvent) -> int:
    """Append ``e`` to a profile's unpolled events; past ``EV_EVENT_BACKLOG`` the older half goes and the
    first event kept carries how many went before it in ``drop_count`` (as an mrc_ctl event queue
    reports its overflow).  Returns how many were dropped (0 almost always)."""
    events.append(e)
    if len(events) <= EV_EVENT_BACKLOG:
        return 0
    drop = len(events) - EV_EVENT_BACKLOG // 2
    del events[:drop]
    first = events[0]
    events[0] = replace(first, drop_count=first.drop_count + drop)
    return drop


def _dur(ns: Any) -> str:
    """A duration in ns as a short text: ns / us / ms / s."""
    if ns is None:
        return "-"
    a = abs(ns)
    if a < 1_000:
        return f"{ns} ns"
    if a < 1_000_000:
        return f"{ns / 1e3:.1f} us"
    if a < 1_000_000_000:
        return f"{ns / 1e6:.1f} ms"
    return f"{ns / 1e9:.2f} s"


def evidence_text(ev: dict[str, Any] | None) -> str:
    """One line that says why an EV changed state, from an :attr:`EvEvent.evidence` dict ("" for None)."""
    if not ev:
        return ""
    rule = ev.get("rule", "?")
    if rule in ("fifo", "loss"):
        later = ev.get("later_on_ev_sent_after_ns")
        on_ev = ("nothing sent after it on this EV delivered" if later is None
                 else f"a packet sent {_dur(later)} after it on this EV delivered")
        sig = ev.get("congestion_signal_ago_ns")
        return (f"{rule}: PSN {ev.get('psn')} (copy {ev.get('xmits')}) sent {_dur(ev.get('sent_ago_ns'))} before, "
                f"{on_ev}; {ev.get('later_acked')} packets sent after it SACKed, {ev.get('later_acked_evs')} other EVs "
                f"delivered one sent after it; "
                f"EV last delivered {_dur(ev.get('ev_delivered_ago_ns'))} before, congestion signal "
                f"{'never' if sig is None else _dur(sig) + ' before'}; late limit {_dur(ev.get('late_limit_ns'))}, "
                f"reorder window {_dur(ev.get('reorder_ns'))}, srtt {_dur(ev.get('srtt_ns'))} +- "
                f"{_dur(ev.get('rttvar_ns'))}, EV srtt {_dur(ev.get('ev_srtt_ns'))} +- {_dur(ev.get('ev_rttvar_ns'))}; "
                f"peer last heard {_dur(ev.get('peer_heard_ago_ns'))} before")
    if rule == "quiet":
        sus = ev.get("suspicion") or {}
        probe = ("no probe sent" if ev.get("probe_sent_ago_ns") is None else
                 f"probe sent {_dur(ev.get('probe_sent_ago_ns'))} before, "
                 f"{'unanswered' if ev.get('probe_unanswered') else 'answered'}")
        heard = ev.get("peer_heard_ago_ns")
        return (f"quiet: suspect {_dur(ev.get('suspect_for_ns'))} (time to show life {_dur(ev.get('confirm_ns'))}, "
                f"held {ev.get('peer_silent_holds', 0)}x for a silent peer), EV last delivered "
                f"{_dur(ev.get('ev_delivered_ago_ns'))} before, {probe}; peer last heard on any path "
                f"{'never' if heard is None else _dur(heard) + ' before'}; suspected on "
                f"PSN {sus.get('psn')} sent {_dur(sus.get('sent_ago_ns'))} before the suspicion, "
                f"{sus.get('later_acked')} packets sent after it SACKed, {sus.get('later_acked_evs')} other EVs "
                f"delivered one sent after it, "
                f"late limit {_dur(sus.get('late_limit_ns'))}, srtt {_dur(sus.get('srtt_ns'))}")
    if rule == "probe":
        return (f"probe: {ev.get('answers_in_a_row')} answers in a row (of {ev.get('probe_good_count')} needed), "
                f"the last probe{' (padded to the MTU)' if ev.get('last_probe_padded') else ''} answered in "
                f"{_dur(ev.get('probe_rtt_ns'))}; "
                f"ASSUMED_BAD for {_dur(ev.get('bad_for_ns'))}, {ev.get('probes_sent')} probes sent, "
                f"{ev.get('probes_lost')} unanswered")
    if rule == "min_active":
        return (f"min_active: back in place of EV {ev.get('instead_of_ev')} ({ev.get('verdict')}) to keep "
                f"{ev.get('ev_min_active')} GOOD, {ev.get('answers_in_a_row')} probe answers in a row")
    if rule == "port_down":
        return f"port_down: local NIC port {ev.get('port')} down (ports down: {ev.get('ports_down')})"
    if rule == "peer_port_down":
        return (f"peer_port_down: the peer's PORT_STATUS (on port {ev.get('rx_port')}) says its ports "
                f"{ev.get('peer_ports_down')} are down")
    if rule == "controller":
        return f"controller: {ev.get('op')} from {ev.get('from')}"
    return f"{rule}: " + ", ".join(f"{k}={v}" for k, v in ev.items() if k != "rule")


@dataclass(slots=True)
class QpCounters:
    """Per-QP counters a CLI or demo prints; retransmissions are split by cause."""

    data_packets_sent: int = 0
    data_bytes_sent: int = 0
    retx_timeout: int = 0
    retx_rack: int = 0  # SACK hole / RACK time-based loss
    retx_trim: int = 0  # trim NACK
    retx_trim_ahead: int = 0  # of those: the packet holding the cumulative ACK, trimmed again, resent ahead of data
    retx_lost_as_data: int = 0  # rack/timeout resends sent as data, not ahead: the QP's packets were being trimmed
    retx_nak: int = 0  # RC go-back-N after a PSN sequence error NAK or an RNR NAK
    retx_rnr: int = 0  # MRC: a LAST_WITH_IMM sent again once the RNR NAK's timer has run
    acks_sent: int = 0
    acks_received: int = 0
    naks_sent: int = 0
    timeouts: int = 0
    probes_sent: int = 0
    probe_answers: int = 0
    probe_late_answers: int = 0  # answers to a probe already given up on (the path is slower than the wait)
    ecn_echoes: int = 0
    cnps_sent: int = 0  # responder: RoCEv2 CNPs for CE-marked packets (RC)
    cnps_received: int = 0  # requester
    trims_received: int = 0
    duplicates_received: int = 0
    out_of_window: int = 0
    bad_access: int = 0
    wimm_overflow: int = 0  # responder: a LAST_WITH_IMM refused, max_wimm_dest immediates not polled yet
    rnr_naks_received: int = 0  # requester: receiver-not-ready NAKs (each holds its PSN back min_rnr_timer)
    min_active_holds: int = 0  # an ASSUMED_BAD verdict refused to keep ev_min_active GOOD EVs
    reorder_widened: int = 0  # times a duplicate echo widened the RACK reordering window
    rack_ev_kept: int = 0  # RACK loss verdicts that left the EV GOOD: its path was still delivering
    loss_not_congestion: int = 0  # RACK losses congestion does not explain (path, SACKs, EV replaced): CC not told
    rc_path_moves: int = 0  # RC: its EV was DENIED by the controller and it moved to the next allowed one
    rc_naks_ignored: int = 0  # RC: sequence error NAKs for the PSN its go-back-N already restarted from
    rack_ev_suspect: int = 0  # RACK verdicts that found an EV quiet and sent it a probe before retiring it
    rack_ev_peer_silent: int = 0  # suspect EVs kept suspect at their deadline: the peer had answered on no path since
    bytes_placed: int = 0

    def as_dict(self) -> dict[str, int]:
        """Counters as a plain dict (for --json)."""
        return {k: getattr(self, k) for k in self.__slots__}


@dataclass(slots=True)
class EndpointCounters:
    """Per-endpoint receive-path counters for packets that never reach a QP."""

    rx_packets: int = 0
    rx_malformed: int = 0
    rx_bad_icrc: int = 0
    rx_unknown_qp: int = 0
    pkey_violations: int = 0  # data/ACK/CNP for a QP whose P_Key it does not match (dropped, IB's P_KeyViolations)
    rx_wrong_state: int = 0
    rx_port_down: int = 0
    probes_answered: int = 0
    port_status_received: int = 0
    extra: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, int]:
        """Counters as a plain dict (for --json)."""
        d = {k: getattr(self, k) for k in self.__slots__ if k != "extra"}
        d.update(self.extra)
        return d
