"""EV profiles: the EV array of a set of QPs, its state machine, EV operations and EV states.

The controller drives a profile through :meth:`EvProfile.modify` / :meth:`EvProfile.query` (via the
context, as ``mrc_ctl_modify_ev_profile`` / ``mrc_ctl_query_ev_profile``).  The endpoint (transport
core) reads the expanded EVs and moves EVs between GOOD and ASSUMED_BAD with
:meth:`EvProfile.endpoint_set_state`, which keeps ``ev_min_active`` GOOD EVs.
"""

from __future__ import annotations

import errno
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from mrc.core.types import keep_event

from .constants import (
    EVENT_STATES,
    AttrOpt,
    EvFieldsOp,
    EvMode,
    EvOp,
    EvOpFlags,
    EvProfileAttrMask,
    EvState,
    ProfileState,
)
from .errors import MrcCtlError, einval, enum_arg
from .events import EvEvent
from .expansion import Expander, WireEv, wire_ev
from .fmt_profile import EvFmtProfile, check_transition
from .types import (
    EV_UNPOPULATED,
    DeviceAttr,
    Ev,
    EvField,
    EvFieldsOpArgs,
    EvOpArgs,
    EvOpEntry,
    EvProfileAttr,
    vendor_cfg_bytes,
)

M = EvProfileAttrMask
S = ProfileState
_CONTROLLER_STATES = (EvState.GOOD, EvState.DENIED)
_GEN_ATTEMPTS = 64  # redraws per generated EV before a duplicate is accepted


@dataclass
class EvProfileEnv:
    """What a profile needs from its context: device limits, other profiles, QPs, events, RNG seed."""

    device: DeviceAttr
    fmt_profile: Callable[[int], EvFmtProfile]
    qps_attached: Callable[[int], int]
    reserve_evs: Callable[[int], None]  # delta EVs (negative frees); raises E2BIG when exhausted
    emit_event: Callable[[int, Ev, EvState, EvEvent | None], None]
    gen_seed: int = 0
    # the time (ns, the endpoint's time base) of a change the control API itself makes (MODIFY_EV_STATE,
    # a port going down): ``MrcCtlContext.clock``; 0 when the context has none
    now_ns: Callable[[], int] = lambda: 0


@dataclass
class EvProfile:
    """One EV profile: configuration, EV array (value+port per slot) and per-slot EV state."""

    profile_id: int
    env: EvProfileEnv = field(repr=False)
    state: ProfileState = ProfileState.INIT
    mode: EvMode | None = None
    fmt_profile_id: int | None = None
    ev_count: int = 0
    ev_min_active: int | None = None
    ev_event_mask: EvState | None = None
    fields: tuple[EvField, ...] = ()
    vendor_cfg: bytes = b""
    evs: list[Ev] = field(default_factory=list)
    states: list[EvState] = field(default_factory=list)
    _expander: Expander | None = field(default=None, repr=False)
    _expanded: list[bytes | None] = field(default_factory=list, repr=False)
    _index: dict[Ev, list[int]] = field(default_factory=dict, repr=False)
    # the transport's side: bumped whenever an EV slot changes value (bound QPs rebuild their
    # encapsulations), and every GOOD/ASSUMED_BAD transition of the ONLINE profile for
    # mrc.core.Endpoint.poll_events (whatever the event mask; the CQs get what the mask names)
    generation: int = field(default=0, repr=False)
    events: list[EvEvent] = field(default_factory=list, repr=False)  # unpolled, at most EV_EVENT_BACKLOG
    events_dropped: int = field(default=0, repr=False)  # ... and how many went unpolled past it

    # ------------------------------------------------------------------ controller side
    def modify(self, attr: EvProfileAttr, mask: EvProfileAttrMask) -> None:
        """mrc_ctl_modify_ev_profile: all-or-nothing; events are emitted only after success."""
        snap = self._snapshot()
        events: list[tuple[int, EvState, EvState]] = []
        try:
            self._modify(attr, M(mask), events)
        except BaseException:
            self._restore(snap)
            raise
        now = self.env.now_ns() if events else 0
        for j, old, st in events:
            self._record(j, old, st, 0, now, "controller", {"rule": "controller", "op": "MODIFY_EV_STATE",
                                                            "from": old.name})

    def _modify(self, attr: EvProfileAttr, mask: EvProfileAttrMask,
                events: list[tuple[int, EvState, EvState]]) -> None:
        pid = self.profile_id
        if mask & M.CUR_STATE:
            raise einval(f"EV profile {pid}: CUR_STATE is read-only")
        if mask & M.EV_OP and mask & M.EV_FIELDS_OP:
            raise einval(f"EV profile {pid}: EV_OP and EV_FIELDS_OP are mutually exclusive")
        cur = self.state
        new = enum_arg(ProfileState, attr.profile_state, "profile_state") if mask & M.STATE else cur
        check_transition(f"EV profile {pid}", cur, new)
        ev_op = enum_arg(EvOp, attr.ev_op.op, "ev_op.op") if mask & M.EV_OP else None
        fields_op = enum_arg(EvFieldsOp, attr.ev_fields_op.op, "ev_fields_op.op") if mask & M.EV_FIELDS_OP else None
        online_cap = bool(self.env.device.opt_attr & AttrOpt.EV_PROFILE_MODIFY_ONLINE)
        config = M.MODE | M.FMT_ID | M.COUNT | M.MIN_ACTIVE | M.EVENT_MASK | M.VENDOR_CFG

        if cur == S.INIT and new == S.INIT and mask & ~M.STATE:
            raise einval(f"EV profile {pid} is INIT: configure it in the INIT -> OFFLINE call")
        if cur == S.ONLINE:
            forbidden = config & ~M.EVENT_MASK if online_cap else config
            if mask & forbidden:
                raise einval(f"EV profile {pid} is ONLINE: {M(mask & forbidden)!r} cannot be modified; "
                             "move it OFFLINE first")
            if not online_cap and (ev_op == EvOp.REPLACE_EV or fields_op == EvFieldsOp.MODIFY_FIELDS):
                raise einval(f"EV profile {pid} is ONLINE: REPLACE_EV/MODIFY_FIELDS need "
                             "MRC_CTL_OPT_CAP_EV_PROFILE_MODIFY_ONLINE")
            if new == S.OFFLINE and self.env.qps_attached(pid):
                raise MrcCtlError(errno.EBUSY, f"EV profile {pid}: {self.env.qps_attached(pid)} QP(s) use it")

        dev = self.env.device.ev
        mode = self.mode
        if mask & M.MODE:
            mode = enum_arg(EvMode, attr.ev_mode, "ev_mode")
            if mode not in (EvMode.AUTO, EvMode.EXP, EvMode.GEN):
                raise einval(f"EV mode {attr.ev_mode!r} must be exactly one of AUTO, EXP, GEN")
            if not mode & dev.ev_mode_mask:
                raise einval(f"EV mode {mode.name} is not supported by the device")
        fmt_id = attr.ev_fmt_profile_id if mask & M.FMT_ID else self.fmt_profile_id
        count = attr.ev_count if mask & M.COUNT else self.ev_count
        if mask & M.COUNT:
            if count < 0:
                raise einval(f"ev_count {count} is negative")
            if count > dev.ev_max_count_profile:
                raise MrcCtlError(errno.E2BIG, f"ev_count {count} > ev_max_count_profile {dev.ev_max_count_profile}")
            if dev.ev_count_align > 1 and count % dev.ev_count_align:
                raise einval(f"ev_count {count} is not a multiple of ev_count_align {dev.ev_count_align}")
        vendor_cfg = vendor_cfg_bytes(attr.vendor_cfg, f"EV profile {pid}") if mask & M.VENDOR_CFG \
            else self.vendor_cfg
        min_active = attr.ev_min_active if mask & M.MIN_ACTIVE else self.ev_min_active
        event_mask = enum_arg(EvState, attr.ev_event_mask, "ev_event_mask") if mask & M.EVENT_MASK else self.ev_event_mask
        if event_mask is not None and event_mask & ~EVENT_STATES:
            raise einval(f"ev_event_mask {event_mask!r}: only GOOD and ASSUMED_BAD can be monitored")
        fields = tuple(attr.ev_fields_op.fields) if fields_op == EvFieldsOp.MODIFY_FIELDS else self.fields
        if fields_op == EvFieldsOp.MODIFY_FIELDS and attr.ev_fields_op.field_count not in (None, len(fields)):
            raise einval("field_count does not match the number of fields supplied")

        if cur == S.INIT and new == S.OFFLINE:
            if mode is None:
                raise einval(f"EV profile {pid}: INIT -> OFFLINE requires MODE")
            if mode != EvMode.AUTO:
                missing = [n for n, ok in (("FMT_ID", mask & M.FMT_ID), ("COUNT", mask & M.COUNT),
                                           ("EV_FIELDS_OP(MODIFY_FIELDS)", fields_op == EvFieldsOp.MODIFY_FIELDS))
                           if not ok]
                if missing:
                    raise einval(f"EV profile {pid}: INIT -> OFFLINE in {mode.name} mode requires {', '.join(missing)}")
        if mode == EvMode.AUTO and (ev_op is not None or fields_op == EvFieldsOp.MODIFY_FIELDS):
            raise einval(f"EV profile {pid} is AUTO: the device chooses EVs; no EV array or fields")
        if min_active is not None and (min_active < 0 or (mode != EvMode.AUTO and min_active > count)):
            raise einval(f"ev_min_active {min_active} must be in 0..ev_count ({count})")

        expander = self._expander
        reshape = bool(mask & (M.FMT_ID | M.COUNT | M.MODE)) or fields_op == EvFieldsOp.MODIFY_FIELDS
        if mode != EvMode.AUTO and new != S.INIT and (reshape or new == S.ONLINE):
            fmt = self.env.fmt_profile(fmt_id)
            if fmt.state == S.INIT or fmt.mode is None or not fmt.fmt_fields:
                raise einval(f"EV profile {pid}: EV format profile {fmt_id} is not configured")
            expander = Expander.build(fmt.mode, fmt.fmt_fields, fields, dev.ev_max_width)
            if new == S.ONLINE and fmt.state != S.ONLINE:
                raise einval(f"EV profile {pid}: EV format profile {fmt_id} must be ONLINE first")

        # ---- commit the configuration (rolled back by modify() on a later failure)
        if new == S.INIT:
            self.env.reserve_evs(-len(self.evs))
            self._reset()
            self.state = new
            return
        old_len = len(self.evs)
        self.mode, self.fmt_profile_id, self.ev_count = mode, fmt_id, count
        self.ev_min_active, self.ev_event_mask, self.fields = min_active, event_mask, fields
        self._expander = expander
        self.vendor_cfg = vendor_cfg
        want = count if mode != EvMode.AUTO else 0
        if want != old_len:
            self.env.reserve_evs(want - old_len)
        if mode == EvMode.GEN and (reshape or cur == S.INIT):
            self._generate(want)
        elif want != old_len or reshape:
            self._resize(want)

        if ev_op is not None:
            self._ev_op(attr.ev_op, events)
        if fields_op == EvFieldsOp.QUERY_FIELDS:
            attr.ev_fields_op = self._query_fields(attr.ev_fields_op.field_count)

        if new == S.ONLINE:
            self._check_online()
        self.state = new

    def query(self, attr: EvProfileAttr, mask: EvProfileAttrMask) -> EvProfileAttr:
        """mrc_ctl_query_ev_profile: fill a new attr with what ``mask`` selects (EV queries included)."""
        mask = M(mask)
        if mask & M.EV_OP and mask & M.EV_FIELDS_OP:
            raise einval(f"EV profile {self.profile_id}: EV_OP and EV_FIELDS_OP are mutually exclusive")
        out = EvProfileAttr()
        if mask & (M.STATE | M.CUR_STATE):
            out.profile_state = out.cur_profile_state = self.state
        if mask & M.MODE and self.mode is not None:
            out.ev_mode = self.mode
        if mask & M.FMT_ID and self.fmt_profile_id is not None:
            out.ev_fmt_profile_id = self.fmt_profile_id
        if mask & M.COUNT:
            out.ev_count = self.ev_count
        if mask & M.MIN_ACTIVE:
            out.ev_min_active = self.ev_min_active or 0
        if mask & M.EVENT_MASK:
            out.ev_event_mask = self.ev_event_mask or EvState.NONE
        if mask & M.VENDOR_CFG:
            out.vendor_cfg = self.vendor_cfg
        if mask & M.EV_OP:
            if attr.ev_op.op not in (EvOp.QUERY_EV_STATE, EvOp.QUERY_EV_ARRAY):
                raise einval(f"query: EV operation {attr.ev_op.op!r} modifies; use modify_ev_profile")
            self._require_array()
            ops = EvOpArgs(attr.ev_op.op, [EvOpEntry(e.ev, e.ev_new, e.state, e.flags) for e in attr.ev_op.entries],
                           attr.ev_op.entry_count)
            self._ev_op(ops, [])
            out.ev_op = ops
        if mask & M.EV_FIELDS_OP:
            if attr.ev_fields_op.op != EvFieldsOp.QUERY_FIELDS:
                raise einval("query: MODIFY_FIELDS is not allowed; use modify_ev_profile")
            out.ev_fields_op = self._query_fields(attr.ev_fields_op.field_count)
        return out

    # ------------------------------------------------------------------ EV operations
    def _ev_op(self, args: EvOpArgs, events: list[tuple[Ev, EvState]]) -> None:
        self._require_array()
        cap = self.env.device.ev.ev_op_max_entries
        if cap and len(args.entries) > cap:
            raise MrcCtlError(errno.E2BIG, f"{len(args.entries)} EV op entries; the device accepts {cap} per batch")
        op = EvOp(args.op)
        if op == EvOp.QUERY_EV_ARRAY:
            n = len(self.evs)
            if args.entry_count is not None and args.entry_count < n:
                raise MrcCtlError(errno.E2BIG, f"EV array has {n} entries; room for {args.entry_count}",
                                  required_count=n)
            args.entries = [EvOpEntry(ev=e, state=s) for e, s in zip(self.evs, self.states)]
            args.entry_count = n
            return
        for i, entry in enumerate(args.entries):
            where = f"EV profile {self.profile_id}, entry {i}"
            if op == EvOp.QUERY_EV_STATE:
                idx = self._find(entry.ev, where)
                entry.state = self.states[idx[0]]
            elif op == EvOp.MODIFY_EV_STATE:
                st = EvState(entry.state)
                if st not in _CONTROLLER_STATES:
                    raise einval(f"{where}: the controller may set GOOD or DENIED, not {st!r} "
                                 "(ASSUMED_BAD is the endpoint's)")
                if not entry.ev.populated:
                    raise einval(f"{where}: cannot set the state of an unpopulated slot")
                for j in self._find(entry.ev, where):
                    if self.states[j] != st:
                        old = self.states[j]
                        self.states[j] = st
                        if self.state == S.ONLINE:
                            events.append((j, old, st))
            elif op == EvOp.REPLACE_EV:
                self._replace(entry, where)
            else:
                raise einval(f"{where}: unknown EV operation {op!r}")

    def _replace(self, entry: EvOpEntry, where: str) -> None:
        new = entry.ev_new
        st = EvState(entry.state)
        if st not in _CONTROLLER_STATES:
            raise einval(f"{where}: REPLACE_EV state must be GOOD or DENIED, not {st!r}")
        expanded = None
        if new.populated:
            if not self.env.device.phy_port_mask >> new.port & 1 or new.port == 0:
                raise einval(f"{where}: port {new.port} is not a port of this device "
                             f"(ports {self.env.device.ports()})")
            expanded = self._expand(new, where)
            if expanded == new.val:  # full-width fields: the expansion is the value; keep one copy
                expanded = new.val
        elif self.state == S.ONLINE:
            raise einval(f"{where}: an ONLINE profile cannot un-populate an EV")
        idxs = self._find(entry.ev, where)  # copied below: _set_slot edits the index
        idxs = list(idxs) if EvOpFlags(entry.flags) & EvOpFlags.ALL_COPIES else idxs[:1]
        for j in idxs:
            self._set_slot(j, new, st, expanded)

    def _expand(self, ev: Ev, where: str) -> bytes:
        assert self._expander is not None
        try:
            return self._expander.expand(ev.val)
        except MrcCtlError as exc:
            raise einval(f"{where}: {exc.strerror}") from None

    # ------------------------------------------------------------------ endpoint side
    def endpoint_set_state(self, index: int, state: EvState, *, force: bool = False, qpn: int = 0,
                           now_ns: int = 0, cause: str = "endpoint", evidence: dict | None = None) -> bool:
        """Move EV slot ``index`` to GOOD or ASSUMED_BAD as the endpoint observed; False if refused.

        Refused (no change) when the profile is not ONLINE, the EV is DENIED or unpopulated, or
        ASSUMED_BAD would leave fewer than ``ev_min_active`` GOOD EVs (``force`` overrides the floor,
        e.g. for a port that went down).  Reported to the event queue if the event mask asks; ``qpn``,
        ``now_ns``, ``cause`` and ``evidence`` (which QP saw what, when, and what the rule saw) go into the
        event's transport fields.
        """
        if state not in (EvState.GOOD, EvState.ASSUMED_BAD):
            raise einval(f"the endpoint sets GOOD or ASSUMED_BAD, not {state!r}")
        if self.state != S.ONLINE or not 0 <= index < len(self.evs):
            return False
        cur = self.states[index]
        if cur == EvState.DENIED or not self.evs[index].populated:
            return False
        if cur == state:
            return True
        if state == EvState.ASSUMED_BAD and not force and self.good_count() - 1 < (self.ev_min_active or 0):
            return False
        self.states[index] = state
        self._record(index, cur, state, qpn, now_ns, cause, evidence)
        return True

    def _record(self, index: int, old: EvState, state: EvState, qpn: int, now_ns: int, cause: str,
                evidence: dict | None = None) -> None:
        """One transition: kept for the transport if GOOD/ASSUMED_BAD, queued if the event mask names it."""
        if state is not EvState.GOOD and state is not EvState.ASSUMED_BAD:
            return
        ev = self.evs[index]
        detail = EvEvent(self.profile_id, ev, 0, state, now_ns, qpn, index, ev.port, old, cause, evidence)
        self.events_dropped += keep_event(self.events, detail)
        if self.ev_event_mask and state & self.ev_event_mask:
            self.env.emit_event(self.profile_id, ev, state, detail)

    def good_count(self) -> int:
        """How many EV slots are GOOD."""
        return sum(1 for s in self.states if s == EvState.GOOD)

    def good_indexes(self) -> list[int]:
        """Indexes of GOOD EV slots (the ones the endpoint may spray on)."""
        return [i for i, s in enumerate(self.states) if s == EvState.GOOD]

    def expanded(self, index: int) -> bytes:
        """The 32-byte expanded EV of slot ``index`` (precomputed when the slot was written)."""
        value = self._expanded[index]
        if value is None:
            raise einval(f"EV profile {self.profile_id}: slot {index} is unpopulated")
        return value

    def wire(self, index: int) -> WireEv:
        """Where slot ``index``'s EV goes in a packet (UDP sport/flow label or SRv6 addresses)."""
        fmt = self.env.fmt_profile(self.fmt_profile_id or 0)
        assert fmt.mode is not None and self._expander is not None
        return wire_ev(fmt.mode, self.expanded(index), self._expander.expanded_bits)

    def field_values(self, ev: Ev) -> list[int]:
        """Compact per-field values of an EV under this profile (e.g. which link of each tier)."""
        if self._expander is None:
            raise einval(f"EV profile {self.profile_id} has no fields")
        return self._expander.compact_values(ev.val)

    # ------------------------------------------------------------------ internals
    def _require_array(self) -> None:
        if self.mode == EvMode.AUTO or self.mode is None:
            raise einval(f"EV profile {self.profile_id} has no EV array (mode {self.mode!r})")

    def _query_fields(self, capacity: int | None) -> EvFieldsOpArgs:
        n = len(self.fields)
        if capacity is not None and capacity < n:
            raise MrcCtlError(errno.E2BIG, f"{n} fields; room for {capacity}", required_count=n)
        return EvFieldsOpArgs(EvFieldsOp.QUERY_FIELDS, list(self.fields), n)

    def _find(self, ev: Ev, where: str) -> list[int]:
        idx = self._index.get(ev)
        if not idx:
            raise MrcCtlError(errno.ENOENT, f"{where}: {ev!r} is not in the EV array")
        return idx

    def _set_slot(self, j: int, ev: Ev, state: EvState, expanded: bytes | None) -> None:
        old = self.evs[j]
        self._index[old].remove(j)
        if not self._index[old]:
            del self._index[old]
        self.evs[j] = ev
        self.states[j] = state if ev.populated else EvState.UNKNOWN
        self._expanded[j] = expanded
        self._index.setdefault(ev, []).append(j)
        self._index[ev].sort()
        self.generation += 1

    def _resize(self, n: int) -> None:
        """Keep the first ``n`` slots (re-expanded under the current fields), pad with unpopulated."""
        evs, states = self.evs[:n], self.states[:n]
        evs += [EV_UNPOPULATED] * (n - len(evs))
        states += [EvState.UNKNOWN] * (n - len(states))
        self.evs, self.states = evs, states
        self._expanded = [None] * n
        self._rebuild_index()
        if self._expander is not None:
            for j, ev in enumerate(evs):
                if ev.populated:
                    try:
                        self._expanded[j] = self._expander.expand(ev.val)
                    except MrcCtlError:
                        self._expanded[j] = None  # reported by _check_online

    def _generate(self, n: int) -> None:
        """GEN mode: draw each field in [min_val, max_val] (max_val 0: every value its mask allows)."""
        assert self._expander is not None
        rng = random.Random(f"mrc-ev-gen:{self.env.gen_seed}:{self.profile_id}")
        ports = self.env.device.ports()
        ranges = []
        for f in self.fields:
            bits = f.mask.bit_count()
            hi = f.max_val if f.max_val else (1 << bits) - 1
            ranges.append((min(f.min_val, hi), hi))
        space = 1
        for lo, hi in ranges:
            space *= hi - lo + 1
        seen: set[Ev] = set()
        evs: list[Ev] = []
        for i in range(n):
            port = ports[i % len(ports)]
            for _ in range(_GEN_ATTEMPTS):
                ev = Ev(self._expander.compact([rng.randint(lo, hi) for lo, hi in ranges]), port)
                if ev not in seen or len(seen) >= space * len(ports):
                    break
            seen.add(ev)
            evs.append(ev)
        self.evs = evs
        self.states = [EvState.GOOD] * n
        self._expanded = [self._expander.expand(ev.val) for ev in evs]
        self._rebuild_index()

    def _rebuild_index(self) -> None:
        self.generation += 1
        self._index = {}
        for j, ev in enumerate(self.evs):
            self._index.setdefault(ev, []).append(j)

    def _check_online(self) -> None:
        pid = self.profile_id
        if self.ev_min_active is None or self.ev_event_mask is None:
            raise einval(f"EV profile {pid}: ONLINE requires MIN_ACTIVE and EVENT_MASK to be set")
        if self.mode == EvMode.AUTO:
            return
        unpopulated = [j for j, ev in enumerate(self.evs) if not ev.populated]
        if unpopulated:
            raise einval(f"EV profile {pid}: {len(unpopulated)} explicit EV slot(s) still unpopulated "
                         f"(first: {unpopulated[0]}); REPLACE_EV them before ONLINE")
        for j, ev in enumerate(self.evs):
            if self._expanded[j] is None:
                self._expanded[j] = self._expand(ev, f"EV profile {pid}, slot {j}")

    def _reset(self) -> None:
        self.mode = self.fmt_profile_id = self.ev_min_active = self.ev_event_mask = None
        self.ev_count, self.fields, self.vendor_cfg = 0, (), b""
        self.evs, self.states, self._expanded, self._index = [], [], [], {}
        self.generation += 1
        self._expander = None

    _SNAP = ("state", "mode", "fmt_profile_id", "ev_count", "ev_min_active", "ev_event_mask", "fields",
             "vendor_cfg", "_expander")

    def _snapshot(self) -> tuple:
        return (tuple(getattr(self, a) for a in self._SNAP), list(self.evs), list(self.states),
                list(self._expanded), len(self.evs))

    def _restore(self, snap: tuple) -> None:
        values, evs, states, expanded, n = snap
        for a, v in zip(self._SNAP, values):
            setattr(self, a, v)
        if len(self.evs) != n:
            self.env.reserve_evs(n - len(self.evs))
        self.evs, self.states, self._expanded = evs, states, expanded
        self._rebuild_index()


def entries_for(evs: Sequence[Ev], state: EvState = EvState.GOOD) -> list[EvOpEntry]:
    """REPLACE_EV entries that populate unpopulated slots with ``evs`` (one slot each)."""
    return [EvOpEntry(ev=EV_UNPOPULATED, ev_new=ev, state=state) for ev in evs]
