"""The controller daemon: converge every switch, keep it converged, check wiring, collect counters.

``Controller`` holds one ``SwitchSession`` per switch.  Each switch is handled on its own worker,
so an unreachable switch (retried with bounded exponential backoff, logged) never holds up the
others.  The controller receives a ready ``PipelineConfig`` (the target plugins in ``fabric/targets``
build it) and imports no target code.  A converge attempt: connect + arbitrate, push the pipeline if the switch has none (or a
different one: its cookie differs), then ``reconcile``.  The loop re-converges a switch whose stream
was lost (restart), that just became primary (backup takeover), or whose reconcile period elapsed.
"""
from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import json
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import grpc

from .mapping import STEV_ECMP, DesiredState, MappingError, P4Names, desired_state
from .metrics import MetricsSnapshot, SwitchInfo
from .p4rt import no_answer
from .plan import STEV_MODES, CounterWatch, FabricPlan, PortSetting, SwitchPlan
from .reconcile import ReconcileResult, entity_key, reconcile
from .repeatlog import RepeatLog
from .session import ElectionIdInUse, PacketIn, PipelineConfig, SessionError, SwitchSession
from .telemetry import TelemetryCollector
from .wiring import MAX_WAIT_S, WiringChecker, WiringReport


@dataclass
class Options:
    """Daemon tunables (seconds unless named otherwise)."""

    election_id: int = 1
    takeover: bool = True
    connect_timeout_s: float = 2.0
    retries: int = 4  # converge attempts per switch in ``converge_all`` (``--once``)
    backoff_initial_s: float = 0.5
    backoff_max_s: float = 4.0  # an unreachable switch: retried at least this often
    # a switch that answers but refuses (its pipeline, a write): the backoff doubles up to this
    refusal_backoff_max_s: float = 60.0
    tick_s: float = 0.25
    reconcile_interval_s: float = 10.0
    wiring_interval_s: float = 10.0
    counters_interval_s: float = 2.0
    # how long a counter read may take before the switch counts as not answering (its session is closed
    # and reconnected, as after a write that gets no answer); None: counters_timeout() -- twice the
    # interval, at least COUNTERS_TIMEOUT_MIN_S, at most the RPC timeout (20 s)
    counters_timeout_s: float | None = None
    wiring_timeout_s: float = 1.5
    # the longest a wiring round may wait when probes have been coming late (wiring.round_wait)
    wiring_max_wait_s: float = MAX_WAIT_S
    # converge_all: a "converging" progress line this often while a switch is still at it (a first
    # pipeline push kept `run --once` silent for about 7 s on 8 softswitches)
    progress_interval_s: float = 2.0
    stev_mode: str = STEV_ECMP
    watch_qps: tuple[int, ...] = ()  # destination QPs that get postcards at every hop
    grpc_host: str = "127.0.0.1"
    grpc_base_port: int | None = None
    addresses: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """The rules `mrc-controller run` checks its flags against, for a script that builds Options
        itself (until 2026-12-08 taken as given: ``retries=0`` reported every switch not converged
        without trying one, ``election_id=0`` is no primary's id, a base port of 70000 or a watched QP
        above 24 bits was tried as such); a ValueError naming the field."""
        if not 1 <= self.election_id < 1 << 128:
            raise ValueError(f"Options.election_id must be 1 .. 2^128-1, got {self.election_id}")
        if self.retries < 1:
            raise ValueError(f"Options.retries must be 1 or more, got {self.retries}")
        for name in ("connect_timeout_s", "backoff_initial_s", "backoff_max_s", "refusal_backoff_max_s", "tick_s",
                     "reconcile_interval_s", "wiring_interval_s", "counters_interval_s", "counters_timeout_s",
                     "wiring_timeout_s", "wiring_max_wait_s", "progress_interval_s"):
            v = getattr(self, name)
            if v is not None and not 0 < v <= threading.TIMEOUT_MAX:  # nan and inf fail too
                raise ValueError(f"Options.{name} must be more than 0 seconds (and finite), got {v}")
        if self.stev_mode not in STEV_MODES:
            raise ValueError(f"Options.stev_mode must be one of {', '.join(STEV_MODES)}, got {self.stev_mode!r}")
        for qp in self.watch_qps:
            if not 0 <= qp <= 0xFFFFFF:
                raise ValueError(f"Options.watch_qps: {qp:#x} is not a 24-bit QP number (0 .. 0xFFFFFF)")
        if self.grpc_base_port is not None and not 1 <= self.grpc_base_port <= 65535:
            raise ValueError(f"Options.grpc_base_port must be 1 .. 65535, got {self.grpc_base_port}")


@dataclass
class SwitchStatus:
    """The controller's bookkeeping for one switch."""

    name: str
    state: str = "new"  # new | unreachable | election_id_in_use | backup | converged | error
    last_error: str = ""
    converged_generation: int = -1
    was_primary: bool = False
    next_try: float = 0.0
    next_reconcile: float = 0.0
    backoff_s: float = 0.0
    refusal_backoff_s: float = 0.0  # the wait after the next refusal (0: backoff_initial_s)
    refused_generation: int = -1  # the session generation the last refusal came on
    info: SwitchInfo = field(default_factory=SwitchInfo)
    last_result: ReconcileResult | None = None
    failures: RepeatLog = field(default_factory=RepeatLog)  # the last failure logged at WARNING, when, repeats


STOP_WAIT_S = 5.0  # run(): how long a stop waits for the switches' work in progress
# the shortest default deadline of a counter read (Options.counters_timeout_s): a live switch's read of
# mrc_switch.p4's counters takes ~50 ms on softswitch and can take well over 100 ms on bmv2
COUNTERS_TIMEOUT_MIN_S = 2.0
# a counter read that failed UNAVAILABLE (the connection reset: a killed or restarting switch): how long
# its session's stream may take to report the same loss before the switch counts as not answering
STREAM_END_WAIT_S = 1.0


# a converge attempt that fails with one of these met another controller, not a refusal (see _attempt)
INTERRUPTED_CODES = frozenset({grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.ABORTED})


class Controller:
    """Drives every switch of a plan over P4Runtime (library API and ``mrc-controller run``)."""

    def __init__(self, plan: FabricPlan, pipeline: PipelineConfig, options: Options | None = None,
                 log: logging.Logger | None = None) -> None:
        self.plan, self.pipeline = plan, pipeline
        self.opts = options or Options()
        self.log = log or logging.getLogger("controller")
        self.names = P4Names.from_p4info(pipeline.p4info)
        self.port_admin: dict[tuple[str, int], bool] = {}
        # per switch, the entity keys an operator's change (set_port_admin) moved in the plan: the next
        # pass logs their updates as a planned change, not as drift behind the controller's back
        self._planned: dict[str, frozenset[tuple]] = {}
        self.sessions: dict[str, SwitchSession] = {}
        self.status: dict[str, SwitchStatus] = {}
        order = list(plan.topology.switches)
        for name, sp in plan.switches.items():
            s = SwitchSession(name, self.address(name, order.index(name)), sp.device_id, self.opts.election_id,
                              takeover=self.opts.takeover, on_packet_in=self._on_packet_in,
                              log=logging.getLogger("controller.session"))
            self.sessions[name] = s
            self.status[name] = SwitchStatus(name, backoff_s=self.opts.backoff_initial_s)
        self.telemetry = TelemetryCollector(
            {n: next((c.ports for c in sp.of(CounterWatch) if c.kind == "port_rx"), ())
             for n, sp in plan.switches.items()}, log=logging.getLogger("controller.telemetry"))
        self.wiring = WiringChecker(plan.topology, plan.sids, self.sessions, log=logging.getLogger("controller.wiring"),
                                    max_wait_s=self.opts.wiring_max_wait_s)
        self.unclaimed_packet_ins = 0
        # what the switches lost outside their pipelines, for the metrics: set by whoever runs the switches
        # and can ask them (P4Runtime has no such counter; ``mrc_fabric.Fabric.outside_drop_counts`` for
        # softswitch); returns {switch: {OUTSIDE_DROP_KINDS member: packets}}
        self.outside_drops: Callable[[], dict[str, dict[str, int]]] | None = None
        self._names_cookie: dict[str, int] = {}  # a backup session's names: the cookie they were read for
        self._switch_locks = {n: threading.Lock() for n in self.sessions}  # one converge at a time per switch
        self._phase: dict[str, str] = {}  # what a converge is doing now, for converge_all's progress lines
        # two workers a switch: its converge and its counter read may both be in progress (run())
        self._pool = cf.ThreadPoolExecutor(max_workers=max(2, min(32, 2 * len(self.sessions))),
                                           thread_name_prefix="switch")
        self._closing = False
        self._closed = threading.Event()  # close() cuts converge_all's backoff waits short
        self._busy: dict[str, cf.Future] = {}  # run(): the switches whose converge is in progress
        self._busy_counters: dict[str, cf.Future] = {}  # ... and whose counter read is
        # per switch, when its counters are next read: staggered over the interval (_counters_due)
        self._next_counters: dict[str, float] = {}
        self._next_wiring = 0.0
        self._wiring_thread = False  # run() checks wiring on its own thread (tick() then does not)

    # ---- addressing and desired state -----------------------------------------------------------
    def address(self, name: str, index: int = 0) -> str:
        """gRPC address of a switch: explicit override, base port + file position, or the topology's port."""
        if name in self.opts.addresses:
            return self.opts.addresses[name]
        port = (self.opts.grpc_base_port + index if self.opts.grpc_base_port
                else self.plan.topology.switches[name].grpc_port)
        return f"{self.opts.grpc_host}:{port}"

    def switch_plan(self, name: str) -> SwitchPlan:
        """The switch's plan with the operator's port-admin overrides applied."""
        sp = self.plan.switches[name]
        if not any(sw == name for sw, _ in self.port_admin):
            return sp
        intents = tuple(dataclasses.replace(i, admin_up=self.port_admin.get((name, i.port), i.admin_up))
                        if isinstance(i, PortSetting) else i for i in sp.intents)
        return dataclasses.replace(sp, intents=intents)

    def desired(self, name: str) -> DesiredState:
        """Every entity switch ``name`` must hold."""
        return desired_state(self.names, self.switch_plan(name), stev_mode=self.opts.stev_mode,
                             watch_qps=self.opts.watch_qps)

    # ---- packet-ins -------------------------------------------------------------------------------
    def _on_packet_in(self, pi: PacketIn) -> None:
        if self.wiring.on_packet_in(pi) or self.telemetry.on_packet_in(pi):
            return
        self.unclaimed_packet_ins += 1

    # ---- converging -------------------------------------------------------------------------------
    def converge_switch(self, name: str) -> bool:
        """One attempt: connect if needed, then (as primary) pipeline + reconcile.  True if converged;
        False for a backup; raises ``SessionError``/``MappingError`` on failure.

        One at a time per switch: the scenario runner converges a switch it restarted while the
        daemon's loop may be converging the same one; two concurrent connects each closed the other's
        stream (the second ``connect`` starts with ``close``), and the demo logged an extra "stream lost;
        reconnecting" for its restarted spine (one demo of three on 2026-12-07)."""
        with self._switch_locks[name]:
            return self._converge_switch(name)

    def _converge_switch(self, name: str) -> bool:
        s, st = self.sessions[name], self.status[name]
        if not s.stream_up.is_set():
            # not converged until this attempt says so: the switch may have restarted empty
            st.info.converged, st.info.connected = False, False
            if st.converged_generation >= 0 and st.state == "converged":
                self.log.warning("stream lost; reconnecting", extra={"fields": {"switch": name}})
                # logged once: until a converge succeeds the switch is not 'converged' even when this
                # attempt fails outside _attempt (the scenario runner's restore retries converge_switch
                # every 0.5 s on a restarted spine, and each retry logged the loss again)
                st.state = "unreachable"
            # the switch's last counter read is from before the loss (a restarted switch counts from 0
            # again): not current until a read on the new session, even if no read saw the switch gone
            self.telemetry.mark_stale(name)
            self._phase[name] = "connecting"
            s.connect(self.opts.connect_timeout_s)
            st.info.connected = True
            self.log.info("connected", extra={"fields": {"switch": name, "address": s.address,
                                                         "election_id": s.election_id}})
        if not s.is_primary:
            s.wait_primary(0.5)
        st.info.primary = s.is_primary
        if not s.may_act:  # a backup, or a standby the switch promoted on its own (takeover off)
            st.state, st.was_primary, st.info.converged = "backup", False, False
            self._resolve_backup_names(name)
            return False
        gen = s.generation
        cookie = s.get_pipeline_cookie()
        if cookie != self.pipeline.cookie:
            self.log.info("pushing pipeline", extra={"fields": {
                "switch": name, "reason": "no pipeline" if cookie is None else "different pipeline",
                "source": self.pipeline.source}})
            self._phase[name] = "pushing pipeline"
            t_push = time.monotonic()
            s.set_pipeline(self.pipeline)
            st.info.pipeline_pushes += 1
            self.log.info("pipeline set", extra={"fields": {"switch": name,
                                                            "seconds": round(time.monotonic() - t_push, 2)}})
        elif s.names is None:
            s.use_p4info(self.pipeline.p4info)
        self._phase[name] = "reconciling"
        desired = self.desired(name)
        # a pass that repeats a refused one logs its drift (what the switch refused) at DEBUG
        res = reconcile(s, desired, logging.getLogger("controller.reconcile"),
                        drift_level=logging.DEBUG if st.info.refused else logging.WARNING,
                        planned=self._planned.get(name, frozenset()))
        self._planned.pop(name, None)
        st.last_result, st.state, st.last_error = res, "converged", ""
        st.converged_generation, st.was_primary = gen, True
        st.info.converged, st.info.reconcile_runs = True, st.info.reconcile_runs + 1
        st.info.entities_written += res.written
        st.info.desired_entities = len(desired)
        return True

    def _resolve_backup_names(self, name: str) -> None:
        """A backup reads the switch's counters too (a Read is open to every client; only Write and
        packet I/O are the primary's), so its metrics are those of the fabric, not empty: resolve the
        session's names against the pipeline the switch runs -- the controller's own P4Info when the
        cookie is ours, else the switch's -- once per pipeline (a connect forgets them, and so does a
        new pipeline pushed by the primary).  No pipeline yet: no names, the next pass looks again.
        A failed look-up leaves the session a backup (logged; the next pass tries again)."""
        s = self.sessions[name]
        try:
            cookie = s.get_pipeline_cookie()
            if cookie is None:
                s.names = None
                return
            if s.names is not None and self._names_cookie.get(name) == cookie:
                return
            p4info = self.pipeline.p4info if cookie == self.pipeline.cookie else s.get_p4info()
        except SessionError as e:
            self.log.info("backup: pipeline not read", extra={"fields": {"switch": name, "error": str(e)}})
            return
        if p4info is not None:
            s.use_p4info(p4info)
            self._names_cookie[name] = cookie

    def _attempt(self, name: str, last: bool = False) -> bool | None:
        """``converge_switch`` with failure bookkeeping (backoff, log); None on failure.  ``last``: no
        retry follows (``converge_all``'s final attempt), so the log says it gives up, not when it
        will retry."""
        st, s = self.status[name], self.sessions[name]
        try:
            ok = self.converge_switch(name)
        except (SessionError, MappingError) as e:
            # interrupted (Ctrl-C on `run --once`) or closing: no retry follows, so none is promised (an
            # attempt in flight said "will retry" after the "interrupted" line)
            last = last or self._closed.is_set()
            if isinstance(e, SessionError) and e.code in INTERRUPTED_CODES and s.stream_up.is_set():
                # another controller took the switch over (PERMISSION_DENIED: we are no longer primary)
                # or pushed a pipeline (ABORTED: it changed during our Read) in the middle of this
                # attempt: the switch refused nothing.  Until 2026-12-07 a backup that was primary for a
                # moment after a switch restart counted a refusal and logged a warning for it, 3 restarts
                # in 4 with two controllers.
                st.state, st.info.converged, st.last_error = "interrupted", False, str(e)
                st.next_try = time.monotonic() + self.opts.backoff_initial_s
                fields = {"switch": name, "error": str(e)}
                if not last:  # (converge_all's final attempt: no retry follows, so none is promised)
                    fields["retry_in_s"] = self.opts.backoff_initial_s
                self.log.info("converge interrupted by another controller" + ("" if last else "; will retry"),
                              extra={"fields": fields})
                return None
            if isinstance(e, SessionError) and no_answer(e.code) and s.stream_up.is_set():
                self._close_unanswering(name, e, "converge")
            st.info.connected = s.stream_up.is_set()
            st.info.converged = False
            st.state = "unreachable" if not st.info.connected else "error"
            if isinstance(e, ElectionIdInUse):
                st.state = "election_id_in_use"
            # refused: the switch answered and said no (its pipeline, a write, the plan's mapping); that
            # does not change in seconds, so it backs off up to refusal_backoff_max_s, not backoff_max_s
            refused = st.state == "error"
            st.info.refused = refused
            # counted apart: a switch that answered and refused is no failure to connect
            if refused:
                st.info.refusals += 1
            else:
                st.info.connect_failures += 1
            st.last_error = str(e)
            now = time.monotonic()
            if refused:
                wait = st.refusal_backoff_s or self.opts.backoff_initial_s
                st.refusal_backoff_s = min(wait * 2, self.opts.refusal_backoff_max_s)
                st.refused_generation = s.generation
            else:
                wait = st.backoff_s
                st.backoff_s = min(st.backoff_s * 2, self.opts.backoff_max_s)
            st.next_try = now + wait
            level = logging.ERROR if st.state == "election_id_in_use" else logging.WARNING
            what = "election id taken by another controller" if level == logging.ERROR else "switch not converged"
            fields = {"switch": name, "state": st.state, "error": str(e),
                      **({"refusals": st.info.refusals} if refused else {"failures": st.info.connect_failures})}
            if not last:
                fields["retry_in_s"] = round(wait, 2)
            # a failure (refused, unreachable, election id taken) is logged when it changes, then at most
            # every REPEAT_LOG_S, the repeats at DEBUG (until 2026-12-07 an unreachable switch logged a
            # warning every ~4 s for ever); the last attempt of converge_all is logged in any case
            key = (st.state, str(e))
            repeat = not st.failures.due(key, now)
            if repeat and not last:
                level = logging.DEBUG
            else:
                if repeat:  # logged after all: not one held back
                    st.failures.held -= 1
                st.failures.last, st.failures.at = key, now
                if held := st.failures.take_held():
                    fields["repeats_not_logged"] = held
            self.log.log(level, f"{what}; {'giving up' if last else 'will retry'}", extra={"fields": fields})
            return None
        if st.failures.last is not None:  # the end of a failure that was logged (its repeats were not)
            fields = {"switch": name, "state": st.state}
            if held := st.failures.take_held():
                fields["repeats_not_logged"] = held
            self.log.info("switch recovered", extra={"fields": fields})
        st.backoff_s = self.opts.backoff_initial_s
        self._clear_refusal(st)
        st.next_reconcile = time.monotonic() + self.opts.reconcile_interval_s
        return ok

    def _close_unanswering(self, name: str, e: SessionError, during: str) -> None:
        """The switch did not answer an RPC with its stream still open (a hung process keeps its TCP
        connection): every further RPC on this session would wait its whole deadline (20 s a write
        batch).  The session is lost: the next attempt reconnects, and the converge after it reconciles."""
        self.log.warning("switch not answering; session closed", extra={"fields": {
            "switch": name, "during": during, "error": str(e)}})
        self.sessions[name].close()
        self.telemetry.mark_stale(name)

    def _clear_refusal(self, st: SwitchStatus) -> None:
        """The switch converged (or the session it refused on is gone): the refusal backoff and the
        log's memory of it start afresh."""
        st.refusal_backoff_s, st.refused_generation, st.info.refused = 0.0, -1, False
        st.failures.reset()

    def converge_all(self, attempts: int | None = None, deadline_s: float = 120.0) -> dict[str, bool]:
        """Converge every switch in parallel, each retried up to ``attempts`` times with backoff."""
        attempts = attempts or self.opts.retries
        end = time.monotonic() + deadline_s

        def one(name: str) -> bool:
            for i in range(attempts):
                ok = self._attempt(name, last=i + 1 == attempts)
                if ok is not None:
                    return ok
                if i + 1 < attempts:
                    wait = min(self.status[name].next_try, end) - time.monotonic()
                    if wait > 0:
                        self._phase[name] = "waiting"  # for the progress line
                        # backoff between retries of an unreachable switch; close() ends it (Ctrl-C on
                        # `run --once` waited out every switch's retries before it exited)
                        if self._closed.wait(wait):
                            return False
                if self._closed.is_set():
                    return False
            return False

        futs = {n: self._pool.submit(one, n) for n in self.sessions}
        t0, pending = time.monotonic(), set(futs.values())
        while pending:  # bounded: every switch gives up by `end` (its attempts and RPCs are bounded too)
            pending = cf.wait(pending, timeout=self.opts.progress_interval_s)[1]
            if pending:
                busy: dict[str, list[str]] = {}  # phase -> the switches in it
                for n in sorted(n for n, f in futs.items() if not f.done()):
                    busy.setdefault(self._phase.get(n, "waiting"), []).append(n)
                self.log.info("converging", extra={"fields": {
                    "done": len(futs) - sum(map(len, busy.values())), "switches": len(futs),
                    "elapsed_s": round(time.monotonic() - t0, 1), "busy": busy}})
        out = {n: f.result() for n, f in futs.items()}
        bad = sorted(n for n, ok in out.items() if not ok)
        self.log.log(logging.WARNING if bad else logging.INFO, "converge", extra={"fields": {
            "converged": sum(out.values()), "switches": len(out), "not_converged": bad,
            "written": sum(st.last_result.written for st in self.status.values() if st.last_result)}})
        return out

    def _needs_converge(self, name: str, now: float) -> bool:
        s, st = self.sessions[name], self.status[name]
        if st.info.refused and (not s.stream_up.is_set() or s.generation != st.refused_generation):
            # the session that was refused is gone (lost, or reconnected): the switch may have been
            # restarted or fixed, so the reconnect is not held by the refusal backoff
            self._clear_refusal(st)
            st.next_try = min(st.next_try, now)
        if not s.stream_up.is_set():
            return now >= st.next_try
        if s.may_act and (st.converged_generation != s.generation or not st.was_primary):
            return now >= st.next_try
        if not s.may_act and st.was_primary:
            st.was_primary, st.state, st.info.primary = False, "backup", False
            self.log.warning("lost mastership", extra={"fields": {"switch": name}})
        return now >= st.next_reconcile and now >= st.next_try

    def tick(self, wait: bool = True) -> None:
        """One loop iteration: converge what needs it, then counters and wiring when due.

        ``wait=False`` (``run``) does not wait for the switches' work: each switch's converge and
        counter read runs on its own worker, and a switch whose previous one has not ended is skipped.
        A hung switch (process stopped, TCP still open) holds its RPCs for the whole RPC timeout (20 s);
        waiting for it held every other switch's reconcile and counters that long (a route deleted on a
        healthy leaf was put back after 21 s instead of within the 10 s period)."""
        for busy in (self._busy, self._busy_counters):
            for n in [n for n, f in busy.items() if f.done()]:
                err = busy.pop(n).exception()
                if err is not None:  # a bug, not a switch failure (those are handled and logged)
                    self.log.error("switch worker failed", exc_info=err, extra={"fields": {"switch": n}})
        now = time.monotonic()
        due = [n for n in self.sessions if n not in self._busy and self._needs_converge(n, now)]
        futs = {n: self._pool.submit(self._attempt, n) for n in due}
        if wait:
            for f in futs.values():
                f.result()
        else:
            self._busy.update(futs)
        now = time.monotonic()
        # wiring first: a dead cable is what the live view must show fast; counters can wait a round
        if not self._wiring_thread and now >= self._next_wiring:
            self._next_wiring = now + self.opts.wiring_interval_s
            if any(s.may_act for s in self.sessions.values()):
                self.wiring_check()
        due = [n for n in self._counters_due(time.monotonic()) if n not in self._busy_counters]
        if due and wait:
            self.poll_counters(due)
        elif due:
            self._busy_counters.update({n: self._pool.submit(self._poll_one, n) for n in due})

    def _counters_due(self, now: float) -> list[str]:
        """The switches whose counters are due, and their next time.  Each switch is read once per
        ``counters_interval_s``, the switches spread evenly over it (the first reads right away, the
        i-th of n after i/n of an interval): all of them at the same instant is a burst of P4Runtime
        work in every software switch at once, which held packets on every path of the demo's fabric
        for ~200 ms (docs/demo.md, "The live view's refresh retired them")."""
        names = list(self.sessions)
        step = self.opts.counters_interval_s / max(1, len(names))
        for i, n in enumerate(names):
            self._next_counters.setdefault(n, now + i * step)
        due = [n for n in names if now >= self._next_counters[n]]
        for n in due:
            nxt = self._next_counters[n] + self.opts.counters_interval_s
            self._next_counters[n] = nxt if nxt > now else now + self.opts.counters_interval_s
        return due

    def run(self, stop: threading.Event) -> None:
        """The periodic loop until ``stop`` is set.  Wiring rounds run on their own thread, so a
        dead cable is reported one wiring interval plus one round after it died, however long the
        reconciles and counter reads of the main loop take (on 8 switches they stretched the live
        view's wiring cadence from 0.5 s to about 2 s)."""
        self.log.info("controller running", extra={"fields": {
            "switches": len(self.sessions), "election_id": self.opts.election_id, "pipeline": self.pipeline.source}})
        self._wiring_thread = True
        wiring = threading.Thread(target=self._wiring_loop, args=(stop,), name="wiring", daemon=True)
        wiring.start()
        try:
            while not stop.is_set():
                self.tick(wait=False)
                stop.wait(self.opts.tick_s)
        finally:
            stop.set()
            wiring.join(timeout=self.opts.wiring_max_wait_s + 5)  # a round waits at most that long
            self._wiring_thread = False
            # the switches' converges and counter reads still running end first (their logs come before
            # "controller stopping"), up to a bound: a hung switch's RPC would hold them for its timeout
            # and close() cancels what is left
            cf.wait(list(self._busy.values()) + list(self._busy_counters.values()), timeout=STOP_WAIT_S)
        self.log.info("controller stopping")

    def _wiring_loop(self, stop: threading.Event) -> None:
        """A wiring round every ``wiring_interval_s`` (from the start of the last) until ``stop``."""
        while not stop.is_set():
            start = time.monotonic()
            if any(s.may_act for s in self.sessions.values()):
                try:
                    self.wiring_check()
                except Exception:  # a failed round is logged; the next one runs
                    self.log.exception("wiring round failed")
            stop.wait(max(0.0, start + self.opts.wiring_interval_s - time.monotonic()))

    def counters_timeout(self, name: str) -> float:
        """The deadline of a counter read of switch ``name`` (``Options.counters_timeout_s``)."""
        if self.opts.counters_timeout_s is not None:
            return self.opts.counters_timeout_s
        return min(max(COUNTERS_TIMEOUT_MIN_S, 2 * self.opts.counters_interval_s), self.sessions[name].rpc_timeout_s)

    def _poll_one(self, name: str) -> None:
        s, st = self.sessions[name], self.status[name]
        if not s.stream_up.is_set() or s.names is None:
            self.telemetry.mark_stale(name)  # lost, or reconnected without names yet: nothing current
            return
        gen = s.generation
        try:
            self.telemetry.poll(s, self.counters_timeout(name))
        except SessionError as e:
            if self._closing:  # a read that close() cancelled is no failure
                return
            if (e.code == grpc.StatusCode.UNAVAILABLE and s.generation == gen
                    and s.stream_lost.wait(STREAM_END_WAIT_S)) or not s.stream_up.is_set() or s.generation != gen:
                # the connection went away under the read (a killed or restarted switch): the session's
                # stream ends with it, and the converge that reconnects reports the loss ("stream lost;
                # reconnecting").  Taken for a switch not answering (until 2026-12-07, when the read's
                # failure was seen before the stream's end), it logged "switch not answering; session
                # closed", set the state 'unreachable' and so left the loss unlogged; seen after it,
                # it logged "counter read failed" as a warning beside the loss's own.
                self.log.info("counter read failed: session lost", extra={"fields": {"switch": name,
                                                                                     "error": str(e)}})
                return
            if no_answer(e.code):
                # no answer within the deadline: the session is lost, as after a write that got no answer
                # (until 2026-12-07 every read of a hung switch waited the 20 s RPC timeout, each cycle,
                # and the switch stayed "connected" until a reconcile had waited 20 s more)
                self._close_unanswering(name, e, "counter read")
                st.state, st.last_error = "unreachable", str(e)
                st.info.connected = st.info.converged = False
                return
            if e.code == grpc.StatusCode.ABORTED and s.stream_up.is_set():
                # another controller pushed a pipeline during the Read ("the forwarding pipeline changed
                # during the Read"): transient, the next read is made against the new one.  As for a
                # converge (INTERRUPTED_CODES) it is counted, not warned about; until 2026-12-07 it was a
                # "counter read failed" WARNING.  (PERMISSION_DENIED cannot interrupt a Read: any
                # controller may read, primary or not.)
                st.info.counter_reads_interrupted += 1
                self.log.info("counter read interrupted by another controller; the next read retries",
                              extra={"fields": {"switch": name, "error": str(e)}})
                return
            self.log.warning("counter read failed", extra={"fields": {"switch": name, "error": str(e)}})

    def poll_counters(self, switches: Iterable[str] | None = None) -> None:
        """Read the counters of every connected switch, or of ``switches`` (errors logged, never fatal)."""
        for f in [self._pool.submit(self._poll_one, n) for n in (self.sessions if switches is None else switches)]:
            f.result()

    def wiring_check(self) -> WiringReport:
        """One wiring probe round over all primary switches."""
        return self.wiring.check(self.opts.wiring_timeout_s)

    def set_port_admin(self, switch: str, port: int, up: bool) -> None:
        """Operator override of a port's admin state, written now and kept by later reconciles
        (usable as ``fabric.Fabric.port_admin_hook``)."""
        if switch not in self.plan.switches:
            raise MappingError(f"unknown switch {switch!r}")
        if not any(ps.port == port for ps in self.plan.switches[switch].of(PortSetting)):
            raise MappingError(f"switch {switch}: port {port} is not a connected port")
        before = {entity_key(e): e for e in self.desired(switch).all()}
        self.port_admin[(switch, port)] = up
        after = {entity_key(e): e for e in self.desired(switch).all()}
        # until 2026-12-07 the write that follows logged each of these as a WARNING `drift`
        self._planned[switch] = self._planned.get(switch, frozenset()) | frozenset(
            k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
        self.log.info("port admin", extra={"fields": {"switch": switch, "port": port, "up": up}})
        ok = self._attempt(switch)
        if ok is False:  # a backup (or a standby the switch promoted): only the primary writes
            raise SessionError(f"switch {switch}: port admin change not written: this controller is not the "
                               f"switch's primary (election id {self.sessions[switch].election_id}); it is "
                               f"written when it becomes primary", grpc.StatusCode.PERMISSION_DENIED)
        if ok is None:
            raise SessionError(f"switch {switch}: port admin change not written: {self.status[switch].last_error}")

    def metrics_snapshot(self, outside_drops: bool = True) -> MetricsSnapshot:
        """The state exported to Prometheus.  ``outside_drops=False`` skips the reader of frames lost
        outside the pipeline (one request to every switch): the live view polls every 250 ms and shows
        none of them, and those requests landed on the switches it watches.  ``counters`` holds the
        switches that are up (connected, and their latest counter read succeeded), no others, and so does
        ``postcards_total``."""
        counters, pc_total, pcs = self.telemetry.snapshot()
        fresh = set(self.telemetry.fresh)
        for name, st in self.status.items():
            st.info.connected = self.sessions[name].stream_up.is_set()
            st.info.primary = self.sessions[name].is_primary
            st.info.up = st.info.connected and name in fresh
        # a switch that is not up (session lost, its last read failed, not read since it reconnected)
        # exports no series of what was read from it -- counters, and the postcards it sent (their count
        # and the latest one's latency and queue depth): its last values would pass for current ones
        # (mrc_switch_up says why).  ``postcards`` keeps them all: it is the list of what arrived.
        counters = {n: c for n, c in counters.items() if self.status[n].info.up}
        pc_total = {n: k for n, k in pc_total.items() if n in self.status and self.status[n].info.up}
        last = self.wiring.last
        problems = ({"miswired": len(last.miswired), "dead": len(last.dead), "unexpected": len(last.unexpected)}
                    if last else {})
        outside: dict[str, dict[str, int]] = {}
        if outside_drops and self.outside_drops is not None:
            try:
                outside = self.outside_drops()
            except Exception as e:  # noqa: BLE001 - a failed read costs those series, not the scrape
                self.log.warning("outside-pipeline drops not read", extra={"fields": {"error": str(e)}})
        return MetricsSnapshot({n: dataclasses.replace(st.info) for n, st in self.status.items()}, counters,
                               pc_total, pcs, dict(self.wiring.liveness), problems, outside)

    def interrupt(self) -> None:
        """Stop retrying at once (Ctrl-C): converge_all's waits end and an attempt that fails now gives
        up; ``close`` then closes the sessions."""
        self._closed.set()

    def close(self) -> None:
        """Close every session (the switches see the streams end) and the worker pool."""
        self._closing = self.telemetry.closing = True
        self._closed.set()
        for s in self.sessions.values():
            s.close()
        self._pool.shutdown(wait=True)


# ---- logging ----------------------------------------------------------------------------------------
class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts, level, logger, msg and the record's ``fields``."""

    def format(self, record: logging.LogRecord) -> str:
        doc = {"ts": round(record.created, 3), "level": record.levelname.lower(), "logger": record.name,
               "msg": record.getMessage()}
        doc.update(getattr(record, "fields", None) or {})
        if record.exc_info:
            doc["exc"] = self.formatException(record.exc_info)
        return json.dumps(doc, default=str)


class TextFormatter(logging.Formatter):
    """``time level logger msg key=value ...``."""

    def format(self, record: logging.LogRecord) -> str:
        fields = getattr(record, "fields", None) or {}
        kv = " ".join(f"{k}={v}" for k, v in fields.items())
        text = f"{self.formatTime(record)} {record.levelname:<7} {record.name} {record.getMessage()} {kv}".rstrip()
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


def setup_logging(fmt: str = "text", level: str = "info", stream=None) -> logging.Handler:
    """Route the ``controller`` loggers to ``stream`` (stderr) in ``json`` or ``text`` form."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    root = logging.getLogger("controller")
    for h in list(root.handlers):
        root.removeHandler(h)
    root.addHandler(handler)
    root.setLevel(level.upper())
    root.propagate = False
    return handler
