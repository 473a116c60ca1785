"""The set of EVs (paths) one QP sprays over: states, round robin with congestion penalties, probes.

Rules (MRC_PROTOCOL.md section 5): pick round robin among GOOD EVs on up ports, skipping an EV
while its penalty is positive and decrementing the penalty on each skip (ECN echo +1, timeout +15,
after UET's REPS); a loss makes an EV ASSUMED_BAD; if that would leave fewer than
``ev_min_active`` GOOD EVs, the ASSUMED_BAD EV with the most answered probes in a row takes its
place, and with none answering the verdict is held; ASSUMED_BAD EVs are probed and return to GOOD
after ``probe_good_count`` answers in a row.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from mrc.core.types import EvEvent, EvState

PENALTY_ECN = 1
PENALTY_TIMEOUT = 15


@dataclass(slots=True)
class EvEntry:
    """One path: the EV value (SRv6 bytes or STEV/UDP int) and the 1-based NIC port (plane)."""

    ev: bytes | int
    port: int
    state: EvState = EvState.GOOD
    penalty: int = 0
    probe_streak: int = 0
    probe_next_ns: int = 0
    probe_req_id: int = -1
    probe_sent_ns: int = 0
    last_change_ns: int = 0
    encap: Any = None  # mrc.wire.codec.Encap, built when the QP learns its peer


def ev_entries(items: Iterable[Any]) -> list[EvEntry]:
    """Adapter: EvEntry, ``(ev, port)`` tuples, or any object with ``ev``/``port`` (e.g. mrc.ctl EVs)."""
    out = []
    for it in items:
        if isinstance(it, EvEntry):
            out.append(EvEntry(it.ev, it.port, it.state))
        elif isinstance(it, tuple):
            out.append(EvEntry(it[0], int(it[1])))
        else:
            state = getattr(it, "state", EvState.GOOD)
            if not isinstance(state, EvState):
                state = EvState(getattr(state, "name", str(state)))
            out.append(EvEntry(it.ev, int(it.port), state))
    if not out:
        raise ValueError("a QP needs at least one EV")
    for e in out:
        if e.port < 1:
            raise ValueError(f"NIC ports are 1-based, got {e.port}")
    return out


class EvSet:
    """EVs of one QP with the spray/penalty/state rules; state changes go to ``events``."""

    __slots__ = ("entries", "events", "holds", "min_active", "ports_down", "qpn", "rr")

    def __init__(self, qpn: int, entries: list[EvEntry], min_active: int = 1):
        self.qpn = qpn
        self.entries = entries
        self.min_active = max(0, min_active)
        self.rr = 0
        self.ports_down: set[int] = set()
        self.events: list[EvEvent] = []
        self.holds = 0

    def good_count(self) -> int:
        return sum(1 for e in self.entries if e.state is EvState.GOOD)

    def usable(self, i: int) -> bool:
        e = self.entries[i]
        return e.state is EvState.GOOD and e.port not in self.ports_down

    def pick(self, port_ok=None) -> int:
        """Next EV index round robin; -1 if nothing can send (``port_ok(port)`` filters busy ports)."""
        ents = self.entries
        n = len(ents)
        down = self.ports_down
        fallback = -1
        for _ in range(2 * n):
            i = self.rr
            self.rr = i + 1 if i + 1 < n else 0
            e = ents[i]
            if e.state is not EvState.GOOD or e.port in down:
                continue
            if port_ok is not None and not port_ok(e.port):
                continue
            if e.penalty > 0:
                e.penalty -= 1
                if fallback < 0:
                    fallback = i
                continue
            return i
        if fallback >= 0:
            return fallback
        if not any(e.state is EvState.GOOD and e.port not in down for e in ents):
            # No GOOD EV at all (e.g. every one DENIED or all ports down): use any EV on an up port
            # rather than stall; the timeout machinery decides whether the QP survives.
            for _ in range(n):
                i = self.rr
                self.rr = i + 1 if i + 1 < n else 0
                e = ents[i]
                if e.state is not EvState.DENIED and e.port not in down and (port_ok is None or port_ok(e.port)):
                    return i
        return -1

    def reply_index(self, i: int) -> int:
        """EV for an ACK/probe answer: the same index if usable (same path back), else round robin."""
        if 0 <= i < len(self.entries) and self.usable(i):
            return i
        j = self.pick()
        return j if j >= 0 else (i if 0 <= i < len(self.entries) else 0)

    def penalize(self, i: int, amount: int) -> None:
        self.entries[i].penalty += amount

    def mark_bad(self, i: int, now_ns: int, cause: str) -> bool:
        """GOOD -> ASSUMED_BAD unless that breaks ev_min_active; True if the state changed."""
        e = self.entries[i]
        if e.state is not EvState.GOOD:
            return False
        if self.good_count() - 1 < self.min_active:
            # Keep ev_min_active GOOD EVs with the ASSUMED_BAD EV that has answered the most probes
            # in a row (it is alive, this one just lost a packet); with none answering, hold.
            j = self._best_probed()
            if j < 0:
                self.holds += 1
                return False
            self._set(j, EvState.GOOD, now_ns, "min_active")
            self.entries[j].penalty = 0
        self._set(i, EvState.ASSUMED_BAD, now_ns, cause)
        e.probe_streak = 0
        e.probe_req_id = -1
        e.probe_next_ns = now_ns
        return True

    def _best_probed(self) -> int:
        """Index of the ASSUMED_BAD EV on an up port with the longest run of answered probes (at
        least one), or -1."""
        best, streak = -1, 0
        for j, e in enumerate(self.entries):
            if e.state is EvState.ASSUMED_BAD and e.port not in self.ports_down and e.probe_streak > streak:
                best, streak = j, e.probe_streak
        return best

    def mark_good(self, i: int, now_ns: int, cause: str) -> bool:
        e = self.entries[i]
        if e.state is not EvState.ASSUMED_BAD:
            return False
        self._set(i, EvState.GOOD, now_ns, cause)
        e.penalty = 0
        return True

    def set_state(self, i: int, state: EvState, now_ns: int, cause: str = "controller") -> None:
        """Controller override (DENIED or back); DENIED changes are not reported as events."""
        if self.entries[i].state is not state:
            self._set(i, state, now_ns, cause)

    def _set(self, i: int, state: EvState, now_ns: int, cause: str) -> None:
        e = self.entries[i]
        old = e.state
        e.state = state
        e.last_change_ns = now_ns
        if state in (EvState.GOOD, EvState.ASSUMED_BAD):
            self.events.append(EvEvent(now_ns, self.qpn, i, e.port, old, state, cause))
