"""The fabric bench's link-failure all-to-all, MRC only, N times in a row: the spread of the recovery.

    python bench/fabric_recovery.py [--runs 12] [--fault-free | --demo] [--target softswitch|bmv2]

bench/fabric_scenarios.py measures MRC's goodput recovery after the link failure once; on this
2-core machine, where the fabric itself uses ~1.5 cores, one run moves by +-0.4 RTTs from the next
(20 ms bins on a ~54 ms RTT, scheduling jitter in every RTT), so a single PASS or FAIL against the
3-RTT bar says little.  This runs the same scenario (examples/small.yaml, the demo's links, link
p1l1-p1s1 down at 1.0 s) ``--runs`` times on one fabric and prints each run's recovery, longest
flow stall, completion, EV retirements and resends, then their mean / median / max and how many
runs met the bar.  ``--fault-free``: the same all-to-all without the failure (EV retirements and
resends are the figures then).  ``--demo``: the demo's MRC run instead (``mrc-fabric demo``'s scenario:
24 messages per flow, link p1l1-p1s1 down at 1.5 s, then spine p2s2 stopped at 3.5 s), with the
recovery after each of its two failures: the spread behind the demo's one figure per failure.  ``--compare-resend-priority``: every run twice on the same fabric, with
MRC's resends after a loss on the switches' resend queue (the default, ``traffic.resend_priority``)
and as plain data, alternating which goes first, and both summaries with their ratios (the baseline
is measured in the same run).  Each run is kept in ``--out``/run-N/ (default
/tmp/fabric-recovery/<UTC start time>): result.json (the row, the metrics with the EV verdicts, the raw
run with every host's samples) and the agents' and the controller's logs of that run (bench/README.md).
Needs root (namespaces), like every fabric bench.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import logging
import shutil
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fabric_scenarios import A2A, A2A_MEASURE, DEADLINE, FAIL, RECOVERY_RTTS

from controller.daemon import TextFormatter
from mrc_fabric.demo import demo_link_defaults, demo_scenario
from mrc_fabric.scenarios import FabricEnv, FabricSpec, Scenario, analyse, late_lines, run_traffic
from mrc_fabric.scenarios.spec import DELAY_AT
from mrc_fabric.targets import TARGETS, selected_target


def default_out() -> Path:
    """Where a bench keeps its fabric's files and every run's report unless ``--out`` says: a fresh
    directory under /tmp per invocation (UTC start time), so no run overwrites an earlier one's."""
    return Path("/tmp/fabric-recovery") / time.strftime("%Y%m%d-%H%M%S", time.gmtime())


def run_dir(out: Path, i: int, name: str = "") -> Path:
    """The directory of run ``i`` (1-based) of a bench writing to ``out``: ``run-<i>``, and the
    setting's name after it when the bench runs two (``--compare-resend-priority``)."""
    return out / (f"run-{i}" + (f"-{name.replace(' ', '-')}" if name else ""))


@contextlib.contextmanager
def controller_log(path: Path) -> Iterator[None]:
    """The in-process controller's log at INFO (its connects, stream losses, pushes) into ``path`` while
    the block runs.  The stderr handler the fabric set up stays at WARNING, so what the bench prints
    does not change."""
    log = logging.getLogger("controller")
    handler = logging.FileHandler(path)
    handler.setFormatter(TextFormatter())
    handler.setLevel(logging.INFO)
    old = log.level
    if not log.level or log.level > logging.INFO:
        log.setLevel(logging.INFO)
    log.addHandler(handler)
    try:
        yield
    finally:
        log.removeHandler(handler)
        log.setLevel(old)
        handler.close()


def keep_run(dest: Path, workdir: Path, mode: str, report: dict[str, Any]) -> list[str]:
    """Keep one run where a failing one can be traced afterwards: ``report`` (the run's row, its analysed
    metrics with the EV verdicts, the raw run with every host's samples) as ``dest``/result.json, and a
    copy of each agent's log of this run (the fabric writes them to ``workdir`` and the next run
    overwrites them).  The names of the files kept."""
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "result.json").write_text(json.dumps(report, indent=1, default=str))
    kept = ["result.json"]
    for log in sorted(workdir.glob(f"agent-{mode}-*.log")):
        shutil.copy2(log, dest / log.name)
        kept.append(log.name)
    return kept


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=12, help="how many runs (default 12)")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--fault-free", action="store_true", help="no link failure")
    mode.add_argument("--demo", action="store_true",
                      help="the demo's MRC run (a link, then a spine lost) instead of the bench's link failure")
    ap.add_argument("--target", choices=TARGETS, default=selected_target(),
                    help="switch target (default $TARGET or softswitch)")
    ap.add_argument("--delay-at", choices=DELAY_AT, default="auto",
                    help="where the links' delay goes: switches, hosts (as on bmv2 without netem), auto (default)")
    ap.add_argument("--late", type=int, default=0, metavar="N",
                    help="after each run, the N packets that held a flow's cumulative ACK longest, with their resends")
    ap.add_argument("--out", type=Path, default=None,
                    help="the fabric's files and each run's report (run-N/: result.json, the agents' and the "
                         "controller's logs); default /tmp/fabric-recovery/<UTC start time>")
    ap.add_argument("--compare-resend-priority", action="store_true",
                    help="each run with resends on the resend queue and as plain data (alternating), both summaries")
    a = ap.parse_args(argv)
    if a.runs < 1:
        ap.error("--runs must be at least 1")
    faults = () if a.fault_free else (FAIL,)
    demo = dataclasses.replace(demo_scenario(delay_at=a.delay_at), modes=("mrc",)) if a.demo else None
    variants = {"resend queue": True, "resends as data": False} if a.compare_resend_priority else {"": True}
    rows: dict[str, list[dict]] = {k: [] for k in variants}
    out = a.out or default_out()
    print(f"each run's report (result.json with samples and EV verdicts, agent and controller logs): "
          f"{out}/run-N/; the switches' logs: {out}/state/", flush=True)
    with FabricEnv(FabricSpec(link_defaults=demo_link_defaults(), delay_at=a.delay_at), prefix="bnrc", grpc_base_port=22700,
                   target=a.target, workdir=out) as env:
        for i in range(a.runs):
            order = list(variants.items())
            if i % 2:
                order.reverse()  # neither setting always runs first (the machine's load drifts)
            for name, prio in order:
                if demo is not None:
                    sc = dataclasses.replace(demo, traffic=dataclasses.replace(demo.traffic, resend_priority=prio))
                else:
                    sc = Scenario(traffic=dataclasses.replace(A2A, resend_priority=prio), faults=faults,
                                  deadline_s=DEADLINE, measure=A2A_MEASURE)
                dest = run_dir(out, i + 1, name)
                dest.mkdir(parents=True, exist_ok=True)
                with controller_log(dest / "controller.log"):
                    raw = run_traffic(env, sc, "mrc")
                m = analyse(raw, sc.measure.bin_ms, sc.measure.sample_ms)
                recs = m["recovery"] or [{}]
                rec = recs[0]
                row = {"recovery_rtts": rec.get("goodput_recovery_rtts"),
                       "recovery_sliding_rtts": rec.get("goodput_recovery_sliding_rtts"),
                       "stall_rtts": rec.get("max_flow_stall_rtts"),
                       "failure_stall_rtts": rec.get("failure_stall_rtts"),
                       **({"spine_recovery_rtts": recs[1].get("goodput_recovery_rtts"),
                           "spine_recovery_sliding_rtts": recs[1].get("goodput_recovery_sliding_rtts"),
                           "spine_stall_rtts": recs[1].get("max_flow_stall_rtts")} if demo is not None and len(recs) > 1
                          else {}),
                       "completion_s": m["completion_s"], "ev_retirements": m["ev_retirements"],
                       # of them on a path through no failed link (the plan names each EV's path)
                       "healthy_retired": (m.get("ev_split") or {}).get("retired_healthy", 0),
                       "resent": m["retransmissions_total"], "rack_resent": m["retransmissions"].get("rack", 0),
                       "trims": m["trims_received"], "duplicates": m["duplicates_received"],
                       "data_packets": m["data_packets_sent"],
                       "srtt_ms": m["srtt_ms_median"], "complete": m["completed"] and not m["data_loss"]}
                rows[name].append(row)
                keep_run(dest, env.workdir, "mrc", {"run": i + 1, "setting": name or None, "row": row,
                                                    "scenario": dataclasses.asdict(sc), "metrics": m, "raw": raw})
                label = f" [{name}]" if name else ""
                print(f"run {i + 1}/{a.runs}{label}: " + ", ".join(f"{k} {v}" for k, v in row.items())
                      + f"; kept in {dest}", flush=True)
                if a.late:
                    print("\n".join(late_lines(m, a.late)), flush=True)
    bad = 0
    means: dict[str, dict[str, float]] = {}
    for name, rs in rows.items():
        if name:
            print(f"-- {name} --")
        bad += _summary(rs, a, means.setdefault(name, {}))
    if a.compare_resend_priority:
        on, off = means["resend queue"], means["resends as data"]
        print("resend queue / resends as data (means of this run's pairs): " +
              ", ".join(f"{k} {on[k] / off[k]:.2f}" for k in on if off.get(k)))
    return 1 if bad else 0


def _recovery_line(rows: list[dict], key: str, head: str, means: dict[str, float]) -> None:
    """One recovery figure's spread over the runs (``key``: the row's ``<key>_rtts``)."""
    vals = [r[f"{key}_rtts"] for r in rows if r.get(f"{key}_rtts") is not None]
    if vals:
        means[key] = statistics.mean(vals)
    print(head + (
        f"mean {statistics.mean(vals):.2f}, median {statistics.median(vals):.2f}, min {min(vals):g}, "
        f"max {max(vals):g} RTTs; <= {RECOVERY_RTTS:g} RTTs in {sum(v <= RECOVERY_RTTS for v in vals)} of "
        f"{len(rows)} runs ({len(rows) - len(vals)} without a figure)" if vals
        else f"no figure in any of {len(rows)} runs"))


def _summary(rows: list[dict], a: argparse.Namespace, means: dict[str, float]) -> int:
    """Print one setting's summary; fill ``means`` (per-run means of the figures it prints); the number
    of runs that did not complete and verify."""
    bad = sum(not r["complete"] for r in rows)
    what = ("the demo (link p1l1-p1s1 down at 1.5 s, spine p2s2 stopped at 3.5 s)" if a.demo else
            "fault-free" if a.fault_free else "link p1l1-p1s1 down at 1.0 s")
    print(f"{a.runs} runs, {what}: "
          f"{a.runs - bad} complete and verified")
    resent = [r["resent"] for r in rows]
    means["resent"] = statistics.mean(resent)
    for k in ("rack_resent", "trims", "duplicates"):
        means[k] = statistics.mean(r[k] for r in rows)
    done = [r["completion_s"] for r in rows if r["completion_s"] is not None]
    if done:
        means["completion"] = statistics.mean(done)
    print(f"  resent packets: mean {statistics.mean(resent):.1f}, max {max(resent)} (after a loss verdict: mean "
          f"{means['rack_resent']:.1f}; trims {means['trims']:.1f}; duplicates at the receivers {means['duplicates']:.1f})"
          f"; EV retirements per run: "
          f"{sorted({r['ev_retirements'] for r in rows})}, of them on a healthy path: "
          f"{sorted({r['healthy_retired'] for r in rows})}" + (f"; completion mean {means['completion']:.2f} s" if done else ""))
    if not a.fault_free:
        st = [r["stall_rtts"] for r in rows if r["stall_rtts"] is not None]
        for key, label in (("recovery", " after the link" if a.demo else ""),) + \
                ((("spine_recovery", " after the spine"),) if a.demo else ()):
            for sub, how in (("", "first 20 ms bin at it"), ("_sliding", "20 ms window at any phase, held 20 ms")):
                _recovery_line(rows, key + sub, f"  recovery{label} (80%, {how}): ", means)
        fst = [r["failure_stall_rtts"] for r in rows if r["failure_stall_rtts"] is not None]

        if st:
            means["stall"] = statistics.mean(st)
            print(f"  longest flow stall after the {'link failure' if a.demo else 'failure'}: median "
                  f"{statistics.median(st):.2f}, max {max(st):g} RTTs; "
                  f"of those begun within 3 RTTs of it: median {statistics.median(fst):.2f}, max {max(fst):g} RTTs")
        sst = [r["spine_stall_rtts"] for r in rows if r.get("spine_stall_rtts") is not None]
        if sst:  # --demo: the second failure's stalls too, not only the first one's
            means["spine_stall"] = statistics.mean(sst)
            print(f"  longest flow stall after the spine loss: median {statistics.median(sst):.2f}, "
                  f"max {max(sst):g} RTTs")
    return bad


if __name__ == "__main__":
    sys.exit(main())
