"""What a queue pair needs from the NIC around it: the one interface between a QP and its endpoint.

:class:`~mrc.core.endpoint.Endpoint` implements it; the requester and responder state machines
(:mod:`mrc.core.requester`, :mod:`mrc.core.responder`) and :class:`~mrc.core.qp.QueuePair` call only
these members, and the endpoint calls only the QP's public methods: no private cross-calls.

Four concerns: frames out (with the port's pacing clock), completions and counters (the CQ),
registered memory, and the EV paths (encapsulations and probe ids).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from mrc.core.ev import EvEntry
    from mrc.core.memory import MemoryRegion
    from mrc.core.qp import QueuePair
    from mrc.core.types import Completion
    from mrc.wire.codec import Encap


class QpHost(Protocol):
    """The endpoint as its QPs see it."""

    encap_mode: str  # "srv6" | "stev" | "udp": how an EV becomes headers
    port_rate_bps: float  # one NIC port's line rate (the CC's ceiling)
    slack_ns: float  # how far ahead of a port's clock a frame may be queued (the transmit ring)
    ports_down: set[int]  # this endpoint's NIC ports that are down (not the peer's)

    # ---- frames out, paced per NIC port
    def send_frame(self, port: int, frame: bytes, now_ns: int) -> None:
        """Queue ``frame`` on NIC ``port`` now (advances the port's pacing clock)."""

    def port_ok_fn(self, now_ns: int) -> Callable[[int], bool]:
        """A predicate: may a data frame go out on this port now (up, and its ring has room)?"""

    def port_wake(self, port: int) -> int:
        """When ``port`` has room for the next frame (ns)."""

    def earliest_port_wake(self, ports: list[int]) -> int | None:
        """When the first of ``ports`` that is up has room (ns); None if all are down."""

    # ---- completions and counters
    def complete(self, c: Completion) -> None:
        """Deliver one work completion (CQE) to the application."""

    def count(self, name: str) -> None:
        """Add one to an endpoint-wide counter (frames that belong to no QP state, e.g. bogus ACKs)."""

    # ---- memory
    def memory_region(self, rkey: int) -> MemoryRegion | None:
        """The registered region of ``rkey``, or None."""

    # ---- paths
    def make_encap(self, remote_gid: bytes, e: EvEntry, index: int) -> Encap:
        """The headers that carry a packet of EV ``e`` (slot ``index``) to ``remote_gid``."""

    def refresh_entries(self, qp: QueuePair) -> None:
        """Take the bound EV profile's current EV values into ``qp``'s entries (after REPLACE_EV)."""

    def register_peer(self, qp: QueuePair) -> None:
        """``qp`` now talks to ``qp.remote.gid`` (for PORT_STATUS and answers to that peer)."""

    def new_probe(self, qp: QueuePair, ev_i: int) -> int:
        """A request id for a probe of ``qp``'s EV ``ev_i``; its answer is routed back to the QP."""

    def keep_late_probe(self, rid: int) -> None:
        """Probe ``rid`` went unanswered for its wait, but its answer is still routed to the QP (a late
        answer) until ``PROBE_LATE_KEEP`` later probes of the same EV were given up too."""

    def forget_probe(self, rid: int) -> None:
        """The QP no longer wants probe ``rid``'s answer: stop routing it."""
