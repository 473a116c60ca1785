"""Contracts between softswitch's parts: the compiled pipeline, the runtime state and the
traffic manager / port engine.

This file only declares data shapes and protocols; each part implements its side:

* ``softswitch.runtime``  -- runtime state written over P4Runtime (tables, action profiles,
  counters, meters, registers, packet replication engine, digests);
* ``softswitch.exec``     -- the v1model pipeline compiled from the checked program; it reads the
  runtime state and turns one received packet into items for the traffic manager, and one
  dequeued item into frames for ports;
* ``softswitch.engine``   -- traffic manager queues, Linux ports, CPU port, the packet loop.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

DROP_PORT = 511
# what egress reads in standard_metadata.egress_spec: bmv2 sets the drop port + 1 into the 9-bit
# field before the egress control runs, so it reads 0 unless egress writes it
PORT_WIDTH = 9  # v1model's PortId_t
EGRESS_SPEC_IN_EGRESS = (DROP_PORT + 1) & ((1 << PORT_WIDTH) - 1)

# bmv2 (simple_switch) instance_type values, see simple_switch.h PktInstanceType.
PKT_INSTANCE_NORMAL = 0
PKT_INSTANCE_INGRESS_CLONE = 1
PKT_INSTANCE_EGRESS_CLONE = 2
PKT_INSTANCE_COALESCED = 3
PKT_INSTANCE_RECIRC = 4
PKT_INSTANCE_REPLICATION = 5
PKT_INSTANCE_RESUBMIT = 6


@dataclass(slots=True)
class TmItem:
    """A packet between ingress and egress, held by the traffic manager.

    ``meta`` is an opaque object owned by ``softswitch.exec`` (the parsed/modified headers,
    user metadata, standard_metadata...).  The traffic manager only reads ``egress_port``,
    ``priority`` and ``length`` and fills the queue fields below before handing the item back
    to ``Pipeline.egress``.
    """

    egress_port: int
    priority: int  # 0..7, 0 is served first (strict priority, as bmv2 since its PR #1276)
    length: int  # bytes, used for byte rates / counters
    meta: object
    # filled by the traffic manager:
    enq_timestamp_us: int = 0
    enq_qdepth: int = 0  # packets in its own priority queue when this one was enqueued (bmv2 PR #1270)
    deq_timedelta_us: int = 0
    deq_qdepth: int = 0  # packets left in its own priority queue when this one was dequeued
    qid: int = 0


@dataclass(slots=True)
class Frame:
    """A frame leaving the switch on ``port`` (the CPU port included)."""

    port: int
    data: bytes


# the drop_reason prefix of a packet dropped because the generated code raised on it (not a drop the
# program decided): the engine counts those in pipeline_errors
INTERNAL_ERROR = "internal error"


@dataclass(slots=True)
class IngressResult:
    """What one packet's trip through parser/verify/ingress produced."""

    to_tm: list[TmItem] = field(default_factory=list)  # normal, multicast replicas, I2E clones
    dropped: bool = False
    drop_reason: str = ""


@dataclass(slots=True)
class EgressResult:
    """What one dequeued item's trip through egress/computeChecksum/deparser produced."""

    frames: list[Frame] = field(default_factory=list)
    to_tm: list[TmItem] = field(default_factory=list)  # E2E clones
    # re-enter ingress: (deparsed bytes, preserved field values owned by softswitch.exec)
    recirculate: list[tuple[bytes, object]] = field(default_factory=list)
    dropped: bool = False
    drop_reason: str = ""


# ``Pipeline.ingress_clock`` bits: which times ingress can observe, so the packet loop reads only
# those.  RX: ``ingress_global_timestamp`` is named, and is the frame's receive time (bmv2 stamps
# it when its receive thread takes the packet from the port, before the input buffer).  NOW: a
# statement reads the time as it runs (a meter: bmv2's ``Meter::execute`` reads the clock).  With
# both, the loop calls ``ingress(data, port, now, rx)``; with one, ``ingress(data, port, t)`` where
# ``t`` is that time; with none, ``t`` is any time (the loop's read for its receive batch).  A
# pipeline without the attribute gets the time its ingress starts, per packet (``CLOCK_NOW``).
CLOCK_RX = 1
CLOCK_NOW = 2


class Pipeline(Protocol):
    """The compiled v1model program (implemented in ``softswitch.exec``)."""

    def ingress(self, data: bytes, ingress_port: int, now_us: int) -> IngressResult:
        """Parser, verifyChecksum, ingress (with resubmit loops), clone I2E, PRE replication."""

    def ingress_recirculated(self, data: bytes, preserved: object, now_us: int) -> IngressResult:
        """Re-enter ingress after ``recirculate_preserving_field_list``."""

    def egress(self, item: TmItem, now_us: int) -> EgressResult:
        """Egress, clone E2E, recirculate, computeChecksum, deparser."""
