"""The EVs (paths) one QP sprays over: per-profile states, round robin with congestion penalties, probes.

Rules (docs/protocol.md, "Transport rules"): pick round robin among GOOD EVs on up ports, skipping an
EV while its penalty is positive and decrementing the penalty on each skip (ECN echo +1, trim +1,
timeout +15, after UET's REPS); a loss makes an EV ASSUMED_BAD; if that would leave fewer than
``ev_min_active`` GOOD EVs, the ASSUMED_BAD EV with the most answered probes in a row takes its
place, and with none answering the verdict is held; ASSUMED_BAD EVs are probed and return to GOOD
after ``probe_good_count`` answers in a row.

EV *states*, ``ev_min_active`` and the events live in the QP's EV profile, as ``mrc_ctl.h`` keeps
them: every QP bound to a profile sees a state change at once, and one change is one event naming
the profile and the EV.  The profile is an ``mrc.ctl`` EV profile (``QpAttr.ev_profile_id``) or, for a
QP created with its own EV list, a :class:`LocalEvProfile` private to that QP.  What stays per QP in
:class:`EvEntry`: the encapsulation towards the QP's peer, the congestion penalty and probe progress.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable
from typing import Any

from mrc.core.types import EvEvent, EvState, QpCounters, keep_event

PENALTY_ECN = 1
PENALTY_TRIM = 1  # a trim NACK: the path's queue reached its trim threshold [ours, as an ECN echo]
PENALTY_TIMEOUT = 15


def spray_start(qpn: int, n: int) -> int:
    """The EV index QP ``qpn``'s round robin starts at among ``n`` EVs: a per-QP offset ([ours]).

    QPs bound to one EV profile (every QP of a host to one peer) would otherwise all start at EV 0
    and, sending alike, spray the profile in lockstep: the same path at the same time.  The offset is
    ``qpn * step mod n`` with ``step`` the integer nearest ``n / golden ratio`` that is coprime to
    ``n``: deterministic, distinct for any ``n`` consecutive QPNs (mrc-perf ``--qps``), and QPNs handed
    out one after the other start far apart in the profile."""
    if n <= 1:
        return 0
    step = max(1, round(n * 0.6180339887))
    while math.gcd(step, n) != 1:
        step += 1
    return qpn * step % n


class LocalEvProfile:
    """The private EV profile of a QP created with its own EV list (no ``mrc.ctl`` profile).

    Same interface as ``mrc.ctl.EvProfile`` as the transport uses it: ``profile_id`` (None here),
    ``states``, ``ev_min_active``, ``generation`` (bumped when an EV slot is replaced), ``events`` (every
    GOOD/ASSUMED_BAD transition, drained by ``Endpoint.poll_events``), :meth:`good_count` and
    :meth:`endpoint_set_state`.
    """

    __slots__ = ("ev_min_active", "events", "events_dropped", "evs", "generation", "ports", "profile_id", "states")

    def __init__(self, evs: list[Any], ports: list[int], states: list[EvState], min_active: int = 1):
        self.profile_id: int | None = None
        self.evs = evs
        self.ports = ports
        self.states = states
        self.ev_min_active = max(0, min_active)
        self.generation = 0
        self.events: list[EvEvent] = []  # unpolled (Endpoint.poll_events), at most EV_EVENT_BACKLOG
        self.events_dropped = 0  # ... and how many went unpolled past it

    def good_count(self) -> int:
        """How many EVs are GOOD."""
        return sum(1 for s in self.states if s is EvState.GOOD)

    def endpoint_set_state(self, index: int, state: EvState, *, force: bool = False, qpn: int = 0,
                           now_ns: int = 0, cause: str = "endpoint", evidence: dict | None = None) -> bool:
        """GOOD or ASSUMED_BAD as the endpoint observed; False if refused (DENIED EV, or the floor).
        ``evidence``: what the rule saw (``EvEvent.evidence``)."""
        cur = self.states[index]
        if cur is EvState.DENIED:
            return False
        if cur is state:
            return True
        if state is EvState.ASSUMED_BAD and not force and self.good_count() - 1 < self.ev_min_active:
            return False
        self._set(index, state, qpn, now_ns, cause, evidence)
        return True

    def set_state(self, index: int, state: EvState, now_ns: int = 0, cause: str = "controller") -> None:
        """Controller override (e.g. DENIED and back); transitions to DENIED are not events."""
        old = self.states[index]
        if old is not state:
            self._set(index, state, 0, now_ns, cause, {"rule": "controller", "op": "set_state", "from": old.name})

    def _set(self, index: int, state: EvState, qpn: int, now_ns: int, cause: str, evidence: dict | None) -> None:
        old = self.states[index]
        self.states[index] = state
        if state is EvState.GOOD or state is EvState.ASSUMED_BAD:
            self.events_dropped += keep_event(self.events, EvEvent(None, self.evs[index], 0, state, now_ns, qpn,
                                                                   index, self.ports[index], old, cause, evidence))


# probes given up as unanswered whose answers an EV still takes, late (MrcRequester._late_probe_answer):
# as many as the probe waits in the longest wait an EV can learn (mrc_policy.PROBE_WAIT_MAX_X), one
# probe going out per wait while none is answered, so any round trip up to that cap is learned (4 until
# 2026-12-07: a path slower than about five waits answered only probes already forgotten)
PROBE_LATE_KEEP = 16


class EvEntry:
    """One path as one QP uses it: the EV value (SRv6 bytes or STEV/UDP int, or a profile's expanded EV),
    the 1-based NIC port (plane), and the QP's own penalty, probe progress and encapsulation.

    ``state`` reads the EV's state in the QP's profile (shared by every QP bound to it); before the
    entry joins a QP it is the state it was created with.
    """

    __slots__ = ("_prof", "_state", "encap", "ev", "index", "last_change_ns", "last_rtt", "last_sent_ns", "penalty", "port",
                 "probe_late", "probe_next_ns", "probe_req_id", "probe_sent_ns", "probe_streak",
                 "probe_wait_ns", "probes_bad", "probes_bad_lost", "rttvar", "signal_ns", "srtt",
                 "suspect_ns", "suspect_sent_ns")

    def __init__(self, ev: bytes | int, port: int, state: EvState = EvState.GOOD):
        self.ev = ev
        self.port = port
        self._state = state
        self._prof: Any = None
        self.index = -1
        self.penalty = 0
        self.probe_streak = 0
        self.probe_next_ns = 0
        self.probe_req_id = -1
        self.probe_sent_ns = 0
        self.probe_late: list[tuple[int, int]] = []  # (id, send time) of probes given up whose answers are still taken
        self.probe_wait_ns = 0  # this path's own probe wait, learned from a late answer (0: the QP's)
        self.probes_bad = 0  # probes sent since this QP saw the EV go ASSUMED_BAD (for the GOOD event's evidence)
        self.probes_bad_lost = 0  # ...and of those, given up as unanswered
        self.last_change_ns = 0
        self.suspect_ns = 0  # when a RACK verdict made this path suspect (0: not suspect), see MrcRequester._suspect
        self.suspect_sent_ns = 0  # ...and the send time of the packet it found missing
        self.signal_ns = -(1 << 62)  # when an ACK last echoed a CE mark or a trim of a packet sent on this path
        self.srtt = 0  # this path's smoothed RTT (ns; 0: no sample yet), from packets sent once on it
        self.rttvar = 0  # ...and its mean deviation (RFC 6298)
        self.last_rtt = 0  # ...and the latest sample (RACK's rack.rtt, per path)
        self.last_sent_ns = -(1 << 62)  # when the QP last sent a data packet on this path
        self.encap: Any = None  # mrc.wire.codec.Encap, built when the QP learns its peer

    def rtt_sample(self, sample: int) -> None:
        """A delivery-time sample of a packet sent once on this path (send to the ACK reporting it).  [ours] Sprayed
        paths queue differently, so each keeps its own srtt/rttvar (RFC 6298's estimator): RACK waits a
        path's own extra delay before calling its packets lost (``MrcRequester._ev_reorder_window``)."""
        self.last_rtt = sample
        if self.srtt == 0:
            self.srtt = sample
            self.rttvar = sample >> 1
        else:
            self.rttvar = (3 * self.rttvar + abs(self.srtt - sample)) >> 2
            self.srtt = (7 * self.srtt + sample) >> 3

    def forget_rtt(self) -> None:
        """Drop the delivery-time record: the next sample starts it again (the QP's srtt meanwhile)."""
        self.srtt = self.rttvar = self.last_rtt = 0

    @property
    def state(self) -> EvState:
        """The EV's state in its profile."""
        return self._state if self._prof is None else self._prof.states[self.index]

    def __repr__(self) -> str:
        ev = self.ev.hex() if isinstance(self.ev, (bytes, bytearray)) else hex(self.ev)
        return f"EvEntry({ev}, port={self.port}, {self.state.name})"


def _ev_and_port(it: Any) -> tuple[Any, int, EvState]:
    """(wire value, port, state) of one item given to ``create_qp``."""
    if isinstance(it, tuple):
        return it[0], int(it[1]), EvState.GOOD
    state = getattr(it, "state", EvState.GOOD)
    if not isinstance(state, EvState):
        state = EvState[getattr(state, "name", str(state))]
    if hasattr(it, "val") and hasattr(it, "port"):  # an mrc.ctl.Ev: its value is taken as the wire EV
        return bytes(it.val), int(it.port), state
    inner = getattr(it, "ev", None)
    if hasattr(inner, "val") and hasattr(inner, "port"):  # an mrc.ctl.EvOpEntry (e.g. from QUERY_EV_ARRAY)
        return bytes(inner.val), int(inner.port), state
    return inner, int(it.port), state


def ev_entries(items: Iterable[Any]) -> list[EvEntry]:
    """Adapter: EvEntry, ``(ev, port)`` tuples, ``mrc.ctl`` ``Ev``/``EvOpEntry`` objects (their value is the
    wire EV: SRv6 bytes 0-31, STEV bytes 0-3, UDP bytes 0-1), or any object with ``ev``/``port``.

    A profile's *compact* EVs need its expansion: bind the QP to the profile instead
    (``QpAttr(ev_profile_id=...)``).
    """
    out = []
    for it in items:
        if isinstance(it, EvEntry):
            out.append(EvEntry(it.ev, it.port, it.state))
        else:
            ev, port, state = _ev_and_port(it)
            out.append(EvEntry(ev, port, state))
    if not out:
        raise ValueError("a QP needs at least one EV")
    for e in out:
        if e.port < 1:
            raise ValueError(f"NIC ports are 1-based, got {e.port}")
    return out


class EvSet:
    """One QP's view of its EV profile: spray/penalty/probe rules over the profile's shared states."""

    __slots__ = ("counters", "entries", "gen", "owed", "owed_seq", "owed_set", "ports", "ports_down", "prof", "qpn", "rr")

    def __init__(self, qpn: int, entries: list[EvEntry], min_active: int = 1, profile: Any = None,
                 counters: QpCounters | None = None):
        self.qpn = qpn
        self.counters = QpCounters() if counters is None else counters  # the QP's: holds are counted there
        self.entries = entries
        if profile is None:
            profile = LocalEvProfile([e.ev for e in entries], [e.port for e in entries],
                                     [e.state for e in entries], min_active)
        elif len(profile.states) != len(entries):
            raise ValueError(f"{len(entries)} entries for a profile of {len(profile.states)} EVs")
        self.prof = profile
        self.gen = profile.generation
        for i, e in enumerate(entries):
            e._prof = profile
            e.index = i
        self.rr = spray_start(qpn, len(entries))
        # EVs the round robin passed while their NIC port was busy, per port in the order passed: each is
        # served when its port can send, before the round robin goes on (see ``pick``)
        self.owed: dict[int, deque[tuple[int, int]]] = {}
        self.owed_set: set[int] = set()
        self.owed_seq = 0
        self.ports_down: set[int] = set()
        self.ports: tuple[int, ...] = ()  # the NIC ports the EVs use (refresh_ports after a port changes)
        self.refresh_ports()

    def refresh_ports(self) -> None:
        """Take the entries' ports again (a REPLACE_EV may move an EV to another NIC port)."""
        ents = self.entries
        self.ports = tuple(sorted({e.port for e in ents}))
        # an EV owed its turn on the port it has left is owed nothing there: dropped now, so the walk can
        # owe it on its new port.  Kept, it stayed in ``owed_set`` until its old port could send -- never,
        # when that port is down, the usual reason to move an EV -- and the walk, seeing it owed, let it
        # lose every turn its new port was busy for (2 picks in 600 against ~100 for its neighbours)
        for p, q in self.owed.items():
            stale = [i for _, i in q if i >= len(ents) or ents[i].port != p]
            if stale:
                self.owed_set.difference_update(stale)
                self.owed[p] = deque((s, i) for s, i in q if i < len(ents) and ents[i].port == p)

    @property
    def holds(self) -> int:
        """ASSUMED_BAD verdicts refused to keep ``ev_min_active`` GOOD EVs (the QP's ``min_active_holds``)."""
        return self.counters.min_active_holds

    @property
    def min_active(self) -> int:
        """The profile's ``ev_min_active``."""
        return self.prof.ev_min_active or 0

    @property
    def events(self) -> list[EvEvent]:
        """The profile's transitions not yet taken by ``Endpoint.poll_events``."""
        return self.prof.events

    def good_count(self) -> int:
        return self.prof.good_count()

    def usable(self, i: int) -> bool:
        return self.prof.states[i] is EvState.GOOD and self.entries[i].port not in self.ports_down

    def pick(self, port_ok=None) -> int:
        """Next EV index round robin; -1 if nothing can send (``port_ok(port)`` filters busy ports)."""
        if port_ok is not None and not any(port_ok(p) for p in self.ports):
            # every port busy or down: the scan below would change nothing (2n steps bring rr back to
            # where it was; penalties are spent only on a port that can send) and find nothing -- the
            # common case of a sender waiting for its NIC, 512 steps with 256 EVs
            return -1
        if self.owed_set and port_ok is not None:
            i = self._pick_owed(port_ok)
            if i >= 0:
                return i
        ents = self.entries
        states = self.prof.states
        n = len(ents)
        down = self.ports_down
        good = EvState.GOOD
        fallback = suspect = -1
        trusted = False  # a GOOD EV that is not suspect, on an up port (busy or not)
        for _ in range(2 * n):
            i = self.rr
            self.rr = i + 1 if i + 1 < n else 0
            e = ents[i]
            if states[i] is not good or e.port in down:
                continue
            if not e.suspect_ns:
                trusted = True
            if port_ok is not None and not port_ok(e.port):
                if not e.suspect_ns and i not in self.owed_set:  # its turn is kept for when its port can send
                    self.owed_set.add(i)
                    self.owed_seq += 1
                    self.owed.setdefault(e.port, deque()).append((self.owed_seq, i))
                continue
            if e.suspect_ns:  # on trial (a probe decides): only if no other EV is left at all, and then
                # the one whose missing packet left last [ours]: it delivered longest, where a dead path's
                # missing packet is from when it died (the fabric bench: a QP whose other EVs were all
                # suspect in the congestion after a link failure sent on the dead one 217 ms after
                # suspecting it, and found that packet lost 325 ms later)
                if suspect < 0 or e.suspect_sent_ns > ents[suspect].suspect_sent_ns:
                    suspect = i
                continue
            if e.penalty > 0:
                e.penalty -= 1
                if fallback < 0:
                    fallback = i
                continue
            return i
        if fallback >= 0:
            return fallback
        if suspect >= 0 and not trusted:  # [ours] not because the other EVs' ports are busy just now:
            return suspect  # a dead path's suspect EV took every slot of its port (the simulator's dead path)
        if not any(states[i] is good and ents[i].port not in down for i in range(n)):
            # No GOOD EV at all (e.g. all ASSUMED_BAD or all ports down): use any EV on an up port that
            # the controller has not DENIED rather than stall; the timeout machinery decides whether
            # the QP survives.
            for _ in range(n):
                i = self.rr
                self.rr = i + 1 if i + 1 < n else 0
                e = ents[i]
                if states[i] is not EvState.DENIED and e.port not in down and (port_ok is None or port_ok(e.port)):
                    return i
        return -1

    def _pick_owed(self, port_ok) -> int:
        """The EV the round robin passed longest ago because its port was busy, on a port that can send
        now; -1 if none.  Without this a multi-port NIC's spray was far from round robin: when one port
        at a time has room (each paced at its line rate) the walk passed every EV of the busy ports and
        those lost their turn, so a QP came back to the same few EVs of each port -- 256 picks over
        256 EVs on 8 ports, freeing in turn, used 33 of them (8 in the plan's port-major order), and on
        the simulated 8-plane fabric a 1 MiB flow put its 256 packets on ~123 of its 256 paths, up to 5
        on one [ours].  An owed EV that is no longer usable (not GOOD, its port down or changed, suspect)
        loses its turn; one with a penalty spends its turn on it, as the walk does."""
        ents, states, down, good = self.entries, self.prof.states, self.ports_down, EvState.GOOD
        while True:
            best = None
            for p, q in self.owed.items():
                if q and (best is None or q[0][0] < self.owed[best][0][0]) and port_ok(p):
                    best = p
            if best is None:
                return -1
            _, i = self.owed[best].popleft()
            self.owed_set.discard(i)
            if i >= len(ents):
                continue
            e = ents[i]
            if states[i] is not good or e.port != best or e.port in down or e.suspect_ns:
                continue
            if e.penalty > 0:
                e.penalty -= 1
                continue
            return i

    def reply_index(self, i: int) -> int:
        """EV for an ACK/probe answer: the same index if usable (same path back), else round robin."""
        if 0 <= i < len(self.entries) and self.usable(i):
            return i
        j = self.pick()
        return j if j >= 0 else (i if 0 <= i < len(self.entries) else 0)

    def penalize(self, i: int, amount: int) -> None:
        self.entries[i].penalty += amount

    def mark_bad(self, i: int, now_ns: int, cause: str, qpn: int | None = None, evidence: dict | None = None) -> bool:
        """GOOD -> ASSUMED_BAD (in the profile) unless that breaks ev_min_active; True if it changed.
        ``qpn``: the QP the event names (default this QP's; 0 for a port event, which no QP saw);
        ``evidence``: what the verdict saw (``EvEvent.evidence``)."""
        qpn = self.qpn if qpn is None else qpn
        prof = self.prof
        if prof.states[i] is not EvState.GOOD:
            return False
        if prof.good_count() - 1 < (prof.ev_min_active or 0):
            # Keep ev_min_active GOOD EVs with the ASSUMED_BAD EV that has answered the most probes
            # in a row (it is alive, this one just lost a packet); with none answering, hold.
            j = self._best_probed()
            if j < 0 or not prof.endpoint_set_state(
                    j, EvState.GOOD, qpn=qpn, now_ns=now_ns, cause="min_active",
                    evidence={"rule": "min_active", "instead_of_ev": i, "verdict": cause,
                              "ev_min_active": prof.ev_min_active or 0,
                              "answers_in_a_row": self.entries[j].probe_streak,
                              "bad_for_ns": now_ns - self.entries[j].last_change_ns}):
                self.counters.min_active_holds += 1
                return False
            self.entries[j].penalty = 0
            self.entries[j].last_change_ns = now_ns
        if not prof.endpoint_set_state(i, EvState.ASSUMED_BAD, qpn=qpn, now_ns=now_ns, cause=cause,
                                       evidence=evidence):
            self.counters.min_active_holds += 1
            return False
        e = self.entries[i]
        e.last_change_ns = now_ns
        e.suspect_ns = 0
        e.probe_streak = 0
        e.probe_req_id = -1
        e.probe_next_ns = now_ns
        e.probes_bad = e.probes_bad_lost = 0
        return True

    def _best_probed(self) -> int:
        """Index of the ASSUMED_BAD EV on an up port with the longest run of answered probes (at
        least one), or -1."""
        best, streak = -1, 0
        states = self.prof.states
        for j, e in enumerate(self.entries):
            if states[j] is EvState.ASSUMED_BAD and e.port not in self.ports_down and e.probe_streak > streak:
                best, streak = j, e.probe_streak
        return best

    def mark_good(self, i: int, now_ns: int, cause: str, evidence: dict | None = None) -> bool:
        """ASSUMED_BAD -> GOOD (probes answered); True if it changed.  ``evidence``: what proved it."""
        if self.prof.states[i] is not EvState.ASSUMED_BAD:
            return False
        if not self.prof.endpoint_set_state(i, EvState.GOOD, qpn=self.qpn, now_ns=now_ns, cause=cause,
                                            evidence=evidence):
            return False
        e = self.entries[i]
        e.penalty = 0
        e.last_change_ns = now_ns
        return True

    def set_state(self, i: int, state: EvState, now_ns: int, cause: str = "controller") -> None:
        """Controller override of a private profile (DENIED or back); a ``mrc.ctl`` profile is changed
        through its ``MrcCtlContext`` (MODIFY_EV_STATE) instead."""
        if self.prof.profile_id is not None:
            raise ValueError(f"QP {self.qpn} is bound to EV profile {self.prof.profile_id}: change EV "
                             "states with MrcCtlContext.modify_ev_profile (MODIFY_EV_STATE)")
        self.prof.set_state(i, state, now_ns, cause)
