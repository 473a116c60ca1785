"""EV events and the EV event queue (mrc_ctl_create_ev_event_cq / mrc_ctl_poll_ev_event).

The queue is bounded and cannot overrun: when it is full a new event is dropped and counted, and the
next event that does fit carries the number of events dropped since the previous delivered one (or
1/0 when the device lacks MRC_CTL_OPT_CAP_EV_EVENT_PRECISE_DROP_CNT).
"""

from __future__ import annotations

from collections import deque
from dataclasses import replace

from mrc.core.types import EvEvent  # struct mrc_ctl_ev_event: one definition, in the transport core

from .constants import EvState
from .errors import einval
from .types import Ev


class EvEventCq:
    """A bounded EV event queue; ``total_dropped`` counts every event it had to drop."""

    def __init__(self, cqe: int, *, precise_drop_count: bool = True) -> None:
        if cqe < 1:
            raise einval(f"cqe {cqe} must be at least 1")
        self.cqe = cqe
        self.precise_drop_count = precise_drop_count
        self._q: deque[EvEvent] = deque()
        self._pending_drops = 0
        self.total_dropped = 0
        self.total_delivered = 0

    def push(self, profile_id: int, ev: Ev, state: EvState, detail: EvEvent | None = None) -> bool:
        """Queue one event; False (and counted) if the queue is full.

        ``detail`` (what the transport knows: time, QP, slot, old state, cause) is kept when given.
        """
        if len(self._q) >= self.cqe:
            self._pending_drops += 1
            self.total_dropped += 1
            return False
        drops = self._pending_drops if self.precise_drop_count else int(self._pending_drops > 0)
        self._pending_drops = 0
        if detail is not None:
            self._q.append(replace(detail, profile_id=profile_id, ev=ev, drop_count=drops, state=state))
        else:
            self._q.append(EvEvent(profile_id, ev, drops, state))
        self.total_delivered += 1
        return True

    def poll(self, num_entries: int) -> list[EvEvent]:
        """Remove and return up to ``num_entries`` events, oldest first."""
        if num_entries < 0:
            raise einval(f"num_entries {num_entries} is negative")
        out = []
        while self._q and len(out) < num_entries:
            out.append(self._q.popleft())
        return out

    def __len__(self) -> int:
        return len(self._q)
