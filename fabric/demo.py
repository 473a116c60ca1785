"""``mrc-fabric demo``: all hosts write to all others over the small example fabric while a spine link
and then a whole spine fail; the same scenario runs with MRC and with the single-path RC baseline.

Prints a progress bar, then per mode a timeline and a summary, then the measured comparison and the
acceptance checks; writes ``result.json``, ``summary.txt`` and ``goodput.png`` to ``--out``.
"""
from __future__ import annotations

import json
import logging
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any, Self

from .scenarios import (
    FabricEnv,
    FaultSpec,
    Scenario,
    TrafficSpec,
    run_scenario,
    summary_lines,
    timeline_lines,
)
from .scenarios.plot import goodput_png
from .scenarios.report import DIP_WINDOW_RTTS
from .scenarios.spec import FabricSpec, MeasureSpec
from .targets import DEFAULT_TARGET, get_target

DEMO_PREFIX = "demo"
DEMO_GRPC_BASE = 27300
# Propagation delay of every switch egress port (softswitch --link-delay): 3 delayed hops each way,
# about 30 ms of the ~35 ms RTT.  Why: at the port rate this emulation can carry (12 Mb/s), one 8 KiB
# packet takes 5.4 ms to serialize, longer than the ~4 ms RTT of the bare fabric; that fabric has a
# bandwidth-delay product below one packet and a per-flow packet gap (~9 ms) larger than its RTT,
# unlike any datacenter fabric (400 Gb/s x 10 us is ~120 packets).  With the delay, a flow has
# several packets per RTT in flight, and the RTT dwarfs the scheduling jitter of Python processes
# on 2 cores, as the RTT dwarfs switch jitter in a real fabric.  docs/demo.md has the measurements.
DEMO_LINK_DELAY_US = 5000
# Rate of every link: 300 full 8 KiB frames/s, 20 Mb/s.  On softswitch one link shared by the port's
# priority queues and charged per byte (an ACK costs its 100 bytes); on bmv2 each data queue's
# set_queue_rate in frames, the top queue unlimited (target capability shares_link_rate, docs/demo.md
# "The link model").  The Python switch processes of this emulation forward a few thousand frames/s between them
# on 2 shared cores; links slower than that make congestion queue up in the traffic manager, where
# mrc_switch.p4 marks ECN and trims (as on a real switch), instead of in the kernel's socket buffers,
# where frames are lost unseen.  The hosts' NIC ports run at the same line rate
# (mrc_fabric.scenarios.runner.FabricEnv.line_rate_gbps) and congestion control does the rest.
DEMO_LINK_RATE_PPS = 300
# Queue depth of every link: 16 frames (the controller derives ECN at 4, trim at 14, drop at 16 from
# it), about 1.5 bandwidth-delay products of a 35 ms RTT at 300 frames/s -- a datacenter switch's
# shallow buffer relative to its BDP, rather than bmv2's 64-frame default (213 ms at this rate).
DEMO_LINK_QUEUE_DEPTH = 16
# The demo's bar for "goodput recovers within a few RTTs of the failure".  Issue 11 aims at 3; on the
# shared 2-core machine one run's figure moves +-0.4 RTTs from the next (2026-12-04 afternoon, control
# packets on the top queue: 2.2-2.9 in 16 demo failures, 2.6-3.4 over 24 runs of
# bench/fabric_recovery.py, 19 of them within 3): the packets lost at the failure are found about an
# RTT and a reordering window after their send and their resends take another RTT (docs/demo.md),
# so the demo keeps the 5 it had and prints the measured figure.
FEW_RTTS = 5.0
# ... and issue 11's target, printed beside the bar as met or missed: 2026-12-06, 12 runs of the demo's MRC
# run on a quiet machine (bench/fabric_recovery.py --demo) met it after both failures in every run
# (1.7-3.0 RTTs after the link, 2.2-2.7 after the spine), a demo run right after the test suite missed it
# once (4.2 after the spine)
TARGET_RTTS = 3.0
DEMO_VIEW_PORT = 9180  # live fabric view (controller/web) of the demo's controller
DEMO_METRICS_PORT = 9108  # its Prometheus metrics (grafana/prometheus.yml scrapes this)
# counters and wiring of the demo's controller are read this often for the view: each refresh reads
# every switch's counters over P4Runtime and sends a wiring probe out of every port, work the Python
# switches do between packets; at 1 s it raised the demo's srtt from ~60 to ~117 ms and MRC missed its
# deadline; at 5 s, once the per-port arrays were read by index rather than as 512-cell wildcards, MRC
# completes as fast as without the view (docs/demo.md; a fault shows in the view within ~5 s)
LIVE_REFRESH_S = 5.0


def demo_link_defaults() -> dict[str, int]:
    """The link properties of the demo's fabric (also the fabric benches'): DEMO_LINK_RATE_PPS,
    DEMO_LINK_QUEUE_DEPTH and DEMO_LINK_DELAY_US on every link.  Where the delay goes is the fabric's
    choice (``FabricSpec.delay_at``): softswitch's link model, a netem qdisc for a target without one
    (bmv2), or, where the kernel has no netem either, the hosts' NICs (``FabricEnv.host_delay_us``);
    the properties are the same on every target."""
    return {"rate_pps": DEMO_LINK_RATE_PPS, "queue_depth": DEMO_LINK_QUEUE_DEPTH, "delay_us": DEMO_LINK_DELAY_US}


def demo_scenario(deadline_s: float = 20.0, delay_at: str = "auto") -> Scenario:
    """The demo: all-to-all on examples/small.yaml; p1l1-p1s1 down at 1.5 s, spine p2s2 stopped at 3.5 s,
    on links with ``demo_link_defaults()``, their delay applied where ``delay_at`` says."""
    return Scenario(
        name="demo: all-to-all, spine link down then a whole spine",
        fabric=FabricSpec(topology="examples/small.yaml", link_defaults=demo_link_defaults(), delay_at=delay_at),
        traffic=TrafficSpec(pattern="all-to-all", size=256 << 10, count=24, qps=1, tx_depth=2, reorder_ms=10.0),
        faults=(FaultSpec(at=1.5, kind="link_down", a="p1l1", b="p1s1"),
                FaultSpec(at=3.5, kind="spine_loss", spine="p2s2", method="stop")),
        modes=("mrc", "rc"), deadline_s=deadline_s, measure=MeasureSpec(sample_ms=5.0, bin_ms=20.0)).check()


def recovery_verdicts(m: dict[str, Any]) -> list[dict[str, Any]]:
    """The demo's verdict on each failure's goodput recovery in the analysed run ``m``: against
    ``FEW_RTTS`` (pass) and ``TARGET_RTTS`` (met), decided on the 20 ms window at any phase, held for
    a window (report.goodput_recovery_sliding: the first window at the bar that stays there 20 ms more)
    (``goodput_recovery_sliding_s``) where the run measured it -- the emulated fabric -- and on the 20 ms
    bins where it did not (a simulated run samples on time; a result.json from before the window).  The
    bins' figure can be falsely early: a host's samples that skip a bin make that bin read 0 MB/s, which
    then passes for the dip and the next bin for the recovery (0.5-1.6 RTTs read where the fabric
    recovered in 1.8-3.8, docs/demo.md).  Both figures are kept in each verdict."""
    out = []
    window = m.get("engine", "netns") == "netns"
    for a in m["recovery"]:
        w = window and "goodput_recovery_sliding_s" in a
        rec, rtts = ((a["goodput_recovery_sliding_s"], a.get("goodput_recovery_sliding_rtts")) if w else
                     (a["goodput_recovery_s"], a.get("goodput_recovery_rtts")))
        out.append({"fault": a["fault"], "judged_on": "window" if w else "bins",
                    "recovery_s": rec, "recovery_rtts": rtts,
                    "bins_recovery_s": a["goodput_recovery_s"], "bins_recovery_rtts": a.get("goodput_recovery_rtts"),
                    "window_recovery_s": a.get("goodput_recovery_sliding_s"),
                    "window_recovery_rtts": a.get("goodput_recovery_sliding_rtts"),
                    "bar_rtts": FEW_RTTS, "pass": rec is not None and rtts is not None and rtts <= FEW_RTTS,
                    "target_rtts": TARGET_RTTS, "target_met": rec is not None and rtts is not None and rtts <= TARGET_RTTS})
    return out


def acceptance_lines(res: dict[str, Any]) -> list[str]:
    """The demo's claims, each checked against what this run measured."""
    m, r = res["metrics"]["mrc"], res["metrics"]["rc"]
    rto_s = 1.024e-6 * (1 << res["scenario"]["traffic"]["ack_timeout"])
    srtt = m["srtt_ms_median"] or 0.0
    out = ["acceptance (measured in this run):"]
    ok = m["completed"] and not m["data_loss"] and m["verified_bytes"] == m["total_bytes"]
    out.append(f"  [{'PASS' if ok else 'FAIL'}] MRC completed every write, {m['verified_bytes'] / 1e6:.1f} MB checked "
               f"byte for byte at the receivers, {m['corrupt_messages']} corrupt, {m['failed_messages']} failed")
    for a, v in zip(m["recovery"], recovery_verdicts(m), strict=True):
        rec, rtts = v["recovery_s"], v["recovery_rtts"]
        win = f"{m['bin_ms']:g} ms window at any phase, held {m['bin_ms']:g} ms" if v["judged_on"] == "window" \
            else f"{m['bin_ms']:g} ms bins"
        if rec is None:
            how = f"NOT within the run ({win})"
        elif rec == 0:
            low = a.get("min_mb_s_after_sliding") if v["judged_on"] == "window" else None
            low = a["min_mb_s_after"] if low is None else low  # a result.json from before the window's minimum
            kind = f"{m['bin_ms']:g} ms window at any phase" if v["judged_on"] == "window" else f"{m['bin_ms']:g} ms bin"
            how = f"at once: no {kind} fell below 80% (lowest {low:.2f} " \
                  f"of {a.get('ref_mb_s', a['pre_mb_s']):.2f} MB/s)"
        else:
            how = f"in {rec * 1000:.0f} ms = {rtts:g} RTTs (median srtt {srtt:.1f} ms; {win})"
        if v["judged_on"] == "window":  # the bins' figure beside the one judged, as the benches print it
            b_s, b_rtts = a["goodput_recovery_s"], a.get("goodput_recovery_rtts")
            how += f" [{m['bin_ms']:g} ms bins, the first at the bar: " + ("not within the run" if b_s is None else "at once" if b_s == 0 else
                                                    f"{b_s * 1000:.0f} ms = {b_rtts:g} RTTs") + "]"
        stall = f"; longest flow stall {a['max_flow_stall_s'] * 1000:.0f} ms" + \
            (f" = {a['max_flow_stall_rtts']:g} RTTs" if a.get("max_flow_stall_rtts") is not None else "") + \
            f" ({a['failure_stall_s'] * 1000:.0f} ms of those begun within {DIP_WINDOW_RTTS:g} RTTs of it)"
        ref = "its pre-failure rate" if a.get("ref_mb_s", a["pre_mb_s"]) == a["pre_mb_s"] else \
            f"the rate after it ({a['ref_mb_s']:.2f} of {a['pre_mb_s']:.2f} MB/s before)"
        target = "met" if v["target_met"] else "missed"
        out.append(f"  [{'PASS' if v['pass'] else 'FAIL'}] MRC goodput back to 80% of {ref} after {a['fault']} "
                   f"{how} (bar: {FEW_RTTS:g} RTTs; the {TARGET_RTTS:g}-RTT target: {target}){stall}")
    sp = m.get("ev_split")
    if sp and sp["retired"]:  # not a pass/fail line: a loaded 2-core machine can stall a switch process
        # for longer than a path's delivery time, which RACK cannot tell from a dead path (docs/demo.md)
        healthy, grey = sp["retired_healthy"], sp.get("retired_grey", 0)
        out.append(f"  MRC EVs made ASSUMED_BAD: {sp['retired']}, "
                   + ("every one on a path through a failed link" if not healthy and not grey
                      and not sp["unknown_path"] else
                      f"{sp['retired_crossing']} on a path through a failed link, "
                      + (f"{grey} on a path through a lossy (grey) link, " if grey else "")
                      + f"{healthy} on a healthy path "
                      f"({healthy - sp['healthy_still_bad_at_end']} of those back to GOOD by the end)"
                      + (f", {sp['unknown_path']} whose path the plan does not name" if sp["unknown_path"] else "")))
    for b in r["recovery"]:
        stall = b["max_flow_stall_s"]
        out.append(f"  [{'PASS' if stall >= rto_s else 'FAIL'}] RC baseline: longest flow stall {stall:.2f} s after "
                   f"{b['fault']} (its retransmission timeout is {rto_s * 1000:.0f} ms); flows stalled until the end: "
                   f"{b['stalled_until_end'] or 'none'}")
    c = res["comparison"]
    if "completion_ratio_rc_over_mrc" in c:
        out.append(f"  completion time RC / MRC = {c['completion_ratio_rc_over_mrc']:.2f} "
                   f"({r['completion_s']:.2f} s / {m['completion_s']:.2f} s)")
    elif m["completion_s"]:
        out.append(f"  completion time RC / MRC >= {c['completion_ratio_rc_over_mrc_at_least']:.2f}: the RC baseline "
                   f"did not complete within {r['elapsed_s']:.1f} s (delivered {r['delivered_bytes'] / 1e6:.1f} of "
                   f"{r['total_bytes'] / 1e6:.1f} MB; a QP pinned to a dead path never recovers on a static fabric)")
    if c.get("goodput_ratio_mrc_over_rc"):
        out.append(f"  goodput MRC / RC = {c['goodput_ratio_mrc_over_rc']:.2f}")
    return out


class LiveView:
    """The live view and Prometheus metrics of the demo's controller (which runs in this process, with no
    daemon loop): a thread reads the counters and runs a wiring check every ``LIVE_REFRESH_S``."""

    def __init__(self, env: FabricEnv, view_port: int, metrics_port: int) -> None:
        self.env, self.view_port, self.metrics_port = env, view_port, metrics_port
        self.urls: list[str] = []
        self.problems: list[str] = []
        self._stop = threading.Event()
        self._servers: list = []
        self._thread: threading.Thread | None = None
        self.log = logging.getLogger("mrc_fabric.demo.live")

    def __enter__(self) -> Self:
        from controller.metrics import MetricsError, serve
        from controller.web import serve_view

        ctl = self.env.ctl
        assert ctl is not None
        if self.view_port:
            try:
                v = serve_view(ctl, self.view_port)
                self._servers.append(v.stop)
                self.urls.append(f"live view {v.url}")
            except OSError as e:  # a busy port costs the view, not the demo
                self.problems.append(f"live view not served on port {self.view_port}: {e}")
        if self.metrics_port:
            try:
                _, server, _ = serve(ctl.metrics_snapshot, self.metrics_port)
                if server is not None:
                    self._servers.append(server.shutdown)
                self.urls.append(f"metrics http://127.0.0.1:{self.metrics_port}/metrics")
            except (OSError, MetricsError) as e:  # serve() reports a busy port as MetricsError
                self.problems.append(f"metrics not served on port {self.metrics_port}: {e}")
        if self._servers:
            # A wiring round logs a warning per dead link; the demo breaks links on purpose and prints
            # its own timeline, so the rounds of the view log to a quiet logger.
            self.log.setLevel(logging.ERROR)
            ctl.wiring.log = self.log
            self._thread = threading.Thread(target=self._refresh, name="demo-live", daemon=True)
            self._thread.start()
        return self

    def _refresh(self) -> None:
        """Every ``LIVE_REFRESH_S``: each switch's counters, one switch at a time spread over the period,
        then one wiring round.  Reading all 8 at once (as ``poll_counters()`` does) took ~0.5 s of CPU
        in a ~250 ms burst on the 2-core machine -- the controller's pure-Python protobuf and every
        switch's P4Runtime server at the same moment -- which held packets on every path for up to
        ~200 ms and made RACK retire 1-8 healthy EVs in each of three plain demos (docs/demo.md); one
        switch at a time costs one switch ~30-45 ms of CPU."""
        ctl = self.env.ctl
        while not self._stop.is_set() and ctl is not None:
            names = list(ctl.sessions)
            slot = LIVE_REFRESH_S / (len(names) + 1)  # one slot per switch, one for the wiring round
            for name in names:
                try:
                    ctl.poll_counters([name])
                except Exception as e:  # noqa: BLE001 - a switch stopped by a fault must not end the view
                    self.log.debug("live view counter read of %s failed: %s", name, e)
                if self._stop.wait(slot):
                    return
            try:
                ctl.wiring.check(0.5)
            except Exception as e:  # noqa: BLE001
                self.log.debug("live view wiring round failed: %s", e)
            self._stop.wait(slot)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
        for stop in self._servers:
            stop()


def _wait_for_ctrl_c(console) -> None:
    """Block until SIGINT/SIGTERM (``--keep``)."""
    stop = threading.Event()
    old = {s: signal.signal(s, lambda *_: stop.set()) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        while not stop.wait(3600):
            pass
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def run_demo(out_dir: Path, target: str = DEFAULT_TARGET, prefix: str = DEMO_PREFIX,
             grpc_base_port: int = DEMO_GRPC_BASE, deadline_s: float = 20.0, keep: bool = False,
             view_port: int = DEMO_VIEW_PORT, metrics_port: int = DEMO_METRICS_PORT, delay_at: str = "auto") -> int:
    """Run the demo with a progress bar; 0 if every acceptance check passed, 1 otherwise.  With ``keep``
    the fabric and its controller (live view, metrics) stay up after the runs until Ctrl-C."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console()
    sc = demo_scenario(deadline_s, delay_at)
    console.print(f"[bold]{sc.name}[/bold]: bring-up of examples/small.yaml ({target}), controller converge, "
                  f"then {len(sc.modes)} runs; faults: {', '.join(f.label() + f' @{f.at:g}s' for f in sc.faults)}")
    ld = sc.fabric.link_defaults or {}
    per = "bytes shared by the port's queues" if get_target(target).shares_link_rate else \
        "frames per data queue, the top queue unlimited"
    rate = f"{ld['rate_pps']} full frames/s ({per}; NIC ports at the same line rate; congestion control: NSCC " \
        "for MRC, DCQCN for RC)" if ld.get("rate_pps") else "no rate model"
    old = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    env = live = None
    t0 = time.monotonic()
    try:
        env = FabricEnv(sc.fabric, prefix=prefix, grpc_base_port=grpc_base_port, target=target, workdir=out_dir)
        if env.host_delay_us:
            console.print(f"links: {rate}; propagation delay at the hosts: each NIC delays what it sends by "
                          f"{env.host_delay_us / 1000:g} ms, a path's one-way delay (" +
                          ("--delay-at hosts" if delay_at == "hosts" else
                           f"{target} cannot delay at its ports and this kernel has no netem qdisc") + "; docs/fabric.md)")
        else:
            console.print(f"links: {rate}; {ld['delay_us'] / 1000:g} ms propagation delay per switch port "
                          "(3 hops each way), so the fabric holds several packets per RTT; see docs/demo.md")
        env.__enter__()
        live = LiveView(env, view_port, metrics_port).__enter__()
        for line in live.urls:
            console.print(f"[bold]{line}[/bold]")
        for line in live.problems:
            console.print(f"[yellow]{line}[/yellow]")
        with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.percentage:>5.1f}%"),
                      TextColumn("{task.fields[info]}"), TimeElapsedColumn(), console=console) as bar:
            tasks = {m: bar.add_task(f"{m:>3} all-to-all", total=1.0, info="waiting") for m in sc.modes}

            def progress(p: dict[str, Any]) -> None:
                last = p["faults"][-1]["did"] if p["faults"] and "did" in p["faults"][-1] else ""
                bar.update(tasks[p["mode"]], completed=p["acked"] / p["total"],
                           info=f"t={p['t_s']:5.1f}s {last}")
            res = run_scenario(sc, prefix=prefix, grpc_base_port=grpc_base_port, workdir=out_dir, target=target,
                               progress=progress, env=env)
        res["wall_s"] = round(time.monotonic() - t0, 2)  # run_scenario's excludes the bring-up done here
        # the recovery lines' verdicts with both figures (the acceptance lines say the same in words)
        res["acceptance"] = {"recovery": recovery_verdicts(res["metrics"]["mrc"])}
        (out_dir / "result.json").write_text(dump(res))
        status = _report(res, sc, out_dir)
        if keep:
            console.print(f"fabric {prefix} kept up: {'; '.join(live.urls) or 'no view (ports busy)'}; "
                          f"`mrc-fabric fault ... --prefix {prefix} --state-dir {out_dir / 'state'}` breaks it; "
                          "Ctrl-C tears it down")
            _wait_for_ctrl_c(console)
        return status
    except KeyboardInterrupt:
        console.print("interrupted: everything the demo started has been removed")
        return 130
    finally:
        if live is not None:
            live.__exit__(None, None, None)
        if env is not None:
            env.__exit__(None, None, None)
        signal.signal(signal.SIGTERM, old)


def _report(res: dict[str, Any], sc: Scenario, out_dir: Path) -> int:
    """Print and write the timelines, summaries and acceptance checks; 0 if every check passed."""
    lines = [(f"setup: bring-up {res['setup']['bringup_s']} s, controller converge {res['setup']['converge_s']} s; "
              f"wall time {res['wall_s']} s"), ""]
    for mode in sc.modes:
        lines += timeline_lines(res["metrics"][mode]) + [""]
    lines += ["summary:"]
    for mode in sc.modes:
        lines += summary_lines(res["metrics"][mode])
    lines += [""] + acceptance_lines(res)
    png = goodput_png(res["metrics"], out_dir / "goodput.png", sc.name)
    lines += ["", f"wrote {out_dir / 'result.json'}, {out_dir / 'summary.txt'}, {png}"]
    text = "\n".join(lines)
    (out_dir / "summary.txt").write_text(text + "\n")
    print(text, flush=True)
    return 1 if "[FAIL]" in text else 0


def main(argv: list[str] | None = None) -> int:  # pragma: no cover - thin wrapper for python -m mrc_fabric.demo
    from .cli import main as cli_main

    return cli_main(["demo", *(argv if argv is not None else sys.argv[1:])])


if __name__ == "__main__":
    sys.exit(main())


def dump(res: dict[str, Any]) -> str:
    """The result as JSON text (for --json)."""
    return json.dumps(res, indent=1, default=str)
