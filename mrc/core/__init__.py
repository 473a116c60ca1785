"""Sans-IO MRC transport core (and the classic RoCEv2 RC baseline): no sockets, threads or clocks.

Drive two endpoints by hand (a driver or :mod:`mrc.sim` does the same with real time or a network)::

    from mrc.core import Endpoint, QpAttr
    a = Endpoint(gid_a, ports=[1, 2], encap="srv6")
    b = Endpoint(gid_b, ports=[1, 2], encap="srv6")
    buf = bytearray(1 << 20); mr = b.reg_mr(buf, base_va=0x10000)
    qa = a.create_qp([(carrier_ab_1, 1), (carrier_ab_2, 2)], QpAttr(mode="mrc"))
    qb = b.create_qp([(carrier_ba_1, 1), (carrier_ba_2, 2)], QpAttr(mode="mrc"))
    a.connect(qa, qb.qpn, gid_b, rq_psn=0, sq_psn=100)
    b.connect(qb, qa.qpn, gid_a, rq_psn=100, sq_psn=0)
    a.post_write(qa, wr_id=1, data=payload, remote_va=0x10000, rkey=mr.rkey, imm=7)
    now = 0
    while not done:
        for port, frame in a.datagrams_to_send(now): b.receive(frame, port, now)   # a "network"
        for port, frame in b.datagrams_to_send(now): a.receive(frame, port, now)
        now = min(t for t in (a.get_timer(), b.get_timer()) if t is not None)
        a.handle_timer(now); b.handle_timer(now)
    a.poll_completions()  # [Completion(wr_id=1, status=SUCCESS, opcode=RDMA_WRITE, ...)]
    b.poll_completions()  # [Completion(opcode=RECV_RDMA_WITH_IMM, imm=7, ...)]
    a.poll_events()       # EV state changes; qa.counters holds retransmissions by cause

Received frames are bytes (whole Ethernet frames); sent frames are ``(port, bytes)``.

Layout: ``endpoint`` (ports, memory, QPs; implements ``host.QpHost``, the only thing a QP calls) ->
``qp`` (QP state machine, shared state) -> ``requester`` / ``responder`` (the send and receive state
machines) with ``mrc_policy`` / ``rc_policy`` (the modes' loss and ack rules); ``ev`` (EV profiles,
spraying), ``cc`` / ``nscc`` (congestion control), ``psn``, ``memory``, ``types``.
"""

from mrc.core.cc import CC_NAMES, CongestionControl, Dcqcn, DcqcnConfig, NoControl, NsccControl, make_cc
from mrc.core.endpoint import Endpoint
from mrc.core.ev import PENALTY_ECN, PENALTY_TIMEOUT, EvEntry, EvSet, ev_entries
from mrc.core.host import QpHost
from mrc.core.memory import MemoryRegion
from mrc.core.nscc import Nscc, NsccConfig
from mrc.core.qp import MODE_MRC, MODE_RC, QpAttr, QueuePair, unwrap
from mrc.core.types import (
                            Completion,
                            EndpointCounters,
                            EvEvent,
                            EvState,
                            QpCounters,
                            QpState,
                            WcOpcode,
                            WcStatus,
                            evidence_text,
)

__all__ = [
                            "CC_NAMES",
                            "MODE_MRC",
                            "MODE_RC",
                            "PENALTY_ECN",
                            "PENALTY_TIMEOUT",
                            "Completion",
                            "CongestionControl",
                            "Dcqcn",
                            "DcqcnConfig",
                            "Endpoint",
                            "EndpointCounters",
                            "EvEntry",
                            "EvEvent",
                            "EvSet",
                            "EvState",
                            "MemoryRegion",
                            "NoControl",
                            "Nscc",
                            "NsccConfig",
                            "NsccControl",
                            "QpAttr",
                            "QpCounters",
                            "QpHost",
                            "QpState",
                            "QueuePair",
                            "WcOpcode",
                            "WcStatus",
                            "ev_entries",
                            "evidence_text",
                            "make_cc",
                            "unwrap",
]
