"""What the requester and the responder of one QP both read from it (``mrc.core.qp``).

Each direction keeps direct references to the QP's shared pieces -- the endpoint behind
``QpHost``, attributes, EV set, remote address, counters and window -- so the per-packet paths
read a local attribute instead of going through the QP.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mrc.core.qp import QueuePair


class QpSide:
    """Base of ``Requester`` and ``Responder``: the QP and the pieces of it both use."""

    def __init__(self, qp: QueuePair):
        self.qp = qp
        self.host = qp.host
        self.qpn = qp.qpn
        self.attr = qp.attr
        self.evset = qp.evset
        self.remote = qp.remote
        self.counters = qp.counters
        self.window = qp.window
