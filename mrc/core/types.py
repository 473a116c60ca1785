"""Plain records the transport core hands out: states, completions, EV events, counters."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
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

    @property
    def new_state(self) -> EvState:
        """The state the EV moved to (the same as ``state``)."""
        return self.state


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
