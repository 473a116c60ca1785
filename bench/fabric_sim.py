"""The simulated fabric at datacenter scale: MRC spraying vs the single-path RC baseline, from one run.

Cases (each in its own process, so its peak memory is its own; docs/simulation.md explains them):
  permutation  128 hosts (1 plane, 8 leaves x 16 hosts, 16 spines), 100 Gb/s, ~12 us RTT, 4 KiB MTU,
               a permutation of 2 MiB flows: MRC vs RC (path pinned by a hash, as ECMP) mean/max FCT,
               their ratio, MRC's max FCT against the ideal (size / line rate + base RTT), and the
               htsim reference (ECMP 378/766 us, REPS 197/215 us).
  link-failure the same permutation, leaf-spine link p1l1-p1s1 down mid-run and back after --reroute-us
               (the time a routing protocol would take): MRC's affected flows back to 80% of their rate
               (us, base RTTs as the floor counts them, and srtts) and their mean rate over the base RTT
               after that; RC's flows pinned to the link stall until the link returns.
  allreduce    a 10-step job of ring all-reduce steps (64 hosts, 16 spines); a spine lost during step
               --step-j (restored --reroute-us later): for MRC and RC the inflation of step j, of the worst
               step the outage overlaps (RC's pinned flows may stall only in the next one) and of the job.
  scale        1,024 hosts x 8 planes x 32 spines (256 paths per pair), permutation of 1 MiB per host, and
               how many of its 256 paths each QP's data took (floor: every QP >= 90%; one frame on each since
               2026-12-07, ~half before: docs/simulation.md "Audit"); no fault, so every EV retired would be
               a healthy path's (floor: 0), with the trims and ECN marks the load cost instead.
  scale-failure (opt-in, two runs per mode, 4 MiB, --cc auto: ~34 min CPU MRC, 1.7 GiB; RC ~9 min CPU, 1.7 GiB) the same fabric, 4 MiB per host,
               link p1l1-p1s1 down at --scale-fault-us (10 us: about a quarter of the way through sending) for --reroute-us
               (--scale-fault spine: the whole spine p1s1), then --scale-linger-us simulated after the
               traffic: the flows with packets on the dead link and their recovery against the same run
               without the failure (same seed: identical until it) -- each flow back to 80% of its rate in a
               full 2 us bin before its completion's, or NOT recovered: completed without such a bin (its
               completion is no recovery: counted as one until 2026-12-07) or still running at the end,
               counted and listed apart; together, the same per bin (floors: back in 3 RTTs, and back with
               the next base RTT's mean at 80% too in 3; 4 MiB since 2026-12-07: with --scale-size-mib 2
               62 of the 64 affected flows complete before their rate is back and these FAIL,
               docs/simulation.md "Recovery accounting") -- the longest stall, EVs made
               ASSUMED_BAD on the failed link vs on healthy paths and back to GOOD, FCT with / without
               (report.failure_impact); the RC baseline too (--scale-modes): its flows pinned to the
               failed component stall until it returns (the link: 0.25 pinned flows expected, as the
               64 flows from or to leaf p1l1 each pin one of 256 paths; --scale-fault spine: ~4).
  scale-incast (opt-in) the scale fabric, no fault, every other host writing --scale-incast-kib (64) to the
               first at once (1,023 -> 1 onto its 8 NIC ports): completion against the receiver's line rate,
               trims, ECN marks, and EVs retired (floor: 0, every one would be healthy). 64 hosts
               (--scale-leaves 2): ~4 s CPU; 1,024 hosts: ~19.5K events/s, 12% of the bytes acknowledged after
               4.5 M events and 231 s of CPU (stopped; projected ~1 h CPU: bench/README.md stop 59).
  congested    the demo at its own time scale (examples/sim/demo-timescale.yaml: 20 Mb/s links, 5 ms, 16-frame
               queues, a link then a spine lost), --congested-seeds seeds, each run with the trimmed packet
               holding a QP's cumulative ACK resent ahead of the data queues from its second trim
               (traffic.trim_ahead 2, the default) and without it (0), same seeds: longest flow stall,
               message latency, srtt, trims; the ratios without / with.
  incast       the same comparison on examples/sim/incast-63.yaml (63 -> 1 at 100 Gb/s, NSCC, ~25 s a run),
               --incast-seeds seeds (1): completion, FCT, message p99, srtt, EVs retired (the scenario has no
               fault: every one would be healthy; 0 since 2026-12-05, docs/simulation.md "Solved").
  incast-127   the same on examples/sim/incast-127.yaml (127 -> 1, ~45 s a run), past the ~32:1 at which the
               trimmed headers alone (130 B a 4,230 B frame) fill the receiver's link (0 healthy EVs retired since 2026-12-05; the
               trim-ahead rule's srtt floor FAILed there until 2026-12-06, +11-19%: the rule fired for QPs whose only
               packet was the trimmed one; docs/simulation.md "127 -> 1").
Every case runs with --cc (traffic.cc; a scenario file's own cc wins: the incasts' say nscc): auto, the default since 2026-12-07, is
what the emulation and the NICs run, NSCC for MRC and DCQCN for the RC baseline; none is no congestion
window (pacing at the NIC rate, ECN echoes, trimming), which every figure recorded before ran with
(bench/README.md stop 60 has both).  Each case's first line says which ran.
Every case prints simulated results, wall time, process CPU time, events/s and peak memory (RSS).
Simulated time is deterministic (scale-failure prints a digest of each run's simulated results);
wall and CPU time depend on the machine's load.  Exit status 1 when a case failed or a floor FAILed.

    python bench/fabric_sim.py [--cases permutation,link-failure,allreduce,scale,congested,incast,incast-127] [--json]
    python bench/fabric_sim.py --cc none   # the figures without congestion control
    python bench/fabric_sim.py --cases scale-failure --reroute-us 100 --scale-linger-us 400
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from mrc_fabric.scenarios.report import analyse, failure_impact, goodput_recovery
from mrc_fabric.scenarios.spec import FabricSpec, FaultSpec, MeasureSpec, Scenario, SimSpec, TrafficSpec
from mrc_fabric.sim import run_sim

MIB = 1 << 20
HTSIM = {"ecmp_mean_us": 378, "ecmp_max_us": 766, "reps_mean_us": 197, "reps_max_us": 215}
CASES = ("permutation", "link-failure", "allreduce", "scale", "scale-failure", "scale-incast", "congested", "incast",
         "incast-127")
# scale-failure (~40 min) is opt-in; the incasts run one seed per setting by default (~10 s and ~45 s a run)
DEFAULT_CASES = ("permutation", "link-failure", "allreduce", "scale", "congested", "incast", "incast-127")
CCS = ("auto", "none", "nscc", "dcqcn")  # --cc: traffic.cc for every case (spec.cc_for)
EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples", "sim")


def scenario(planes: int, spines: int, leaves: int, hpl: int, size: int, *, pattern: str = "permutation",
             shift: int = 0, steps: int = 1, faults: tuple = (), gbps: float = 100.0, delay_ns: int = 1250,
             deadline_s: float = 0.02, sample_us: float = 1.0, modes: tuple = ("mrc", "rc"),
             linger_s: float = 0.0, cc: str = "auto") -> Scenario:
    """A simulated scenario: a Clos fabric, one message of ``size`` per flow, datacenter timers."""
    hosts = leaves * hpl
    return Scenario(
        name=f"{hosts} hosts {pattern}",
        fabric=FabricSpec(topology=None, generate={"planes": planes, "spines": spines, "leaves": leaves,
                                                   "hosts_per_leaf": hpl}),
        # shift = hosts per leaf: every flow leaves its leaf (a permutation across the fabric)
        traffic=TrafficSpec(pattern=pattern, size=size, count=1, qps=1, tx_depth=1, rate_gbps=gbps,
                            shift=shift or hpl, ack_timeout=8, reorder_ms=0.004, probe_interval_ms=0.05,
                            steps=steps, cc=cc),
        faults=faults, modes=modes, deadline_s=deadline_s, seed=1,
        measure=MeasureSpec(sample_ms=sample_us / 1000, bin_ms=sample_us * 2 / 1000, congestion_ms=0.01,
                            switch_counters=True),
        sim=SimSpec(link_gbps=gbps, delay_ns=delay_ns, queue_packets=64, linger_s=linger_s)).check()


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _run(sc: Scenario, mode: str) -> tuple[dict, dict]:
    raw = run_sim(sc, mode)
    return raw, analyse(raw, sc.measure.bin_ms, sc.measure.sample_ms)


def _perf(raw: dict) -> dict:
    s = raw["sim"]
    return {"events": s["events"], "wall_s": s["wall_s"], "cpu_s": s["cpu_s"], "events_per_s": s["events_per_s"]}


def case_permutation(a: argparse.Namespace) -> dict:
    size = 2 * MIB
    sc = scenario(1, 16, 8, 16, size, cc=a.cc)
    out: dict = {"case": "permutation", "hosts": 128, "size_bytes": size}
    for mode in ("mrc", "rc"):
        raw, m = _run(sc, mode)
        out[mode] = {"completed": m["completed"], "fct_mean_us": m["fct_us"]["mean"], "fct_p99_us": m["fct_us"]["p99"],
                     "fct_max_us": m["fct_us"]["max"], "srtt_us": (m["srtt_ms_median"] or 0) * 1000,
                     "retx": m["retransmissions"], "trims": m["switch_trims"], "ecn": m["switch_ecn_marks"],
                     "drops": m["switch_drops"], **_perf(raw)}
    base_rtt_us = 8 * 1.25 + 4 * 4250 * 8 / 100e9 * 1e6  # 8 link delays + a full frame over 4 hops
    ideal = size * 8 / 100e9 * 1e6 + base_rtt_us
    out["ideal_fct_us"] = round(ideal, 1)
    out["max_fct_ratio_rc_over_mrc"] = round(out["rc"]["fct_max_us"] / out["mrc"]["fct_max_us"], 2)
    out["mean_fct_ratio_rc_over_mrc"] = round(out["rc"]["fct_mean_us"] / out["mrc"]["fct_mean_us"], 2)
    out["mrc_max_over_ideal"] = round(out["mrc"]["fct_max_us"] / ideal, 2)
    out["htsim"] = HTSIM
    out["htsim_max_ratio"] = round(HTSIM["ecmp_max_us"] / HTSIM["reps_max_us"], 2)
    out["floors"] = permutation_floors(out)
    return out


def permutation_floors(out: dict) -> dict[str, bool]:
    """The permutation case's floors.  Its FCTs are those of the flows that completed (report.analyse), so
    a run that left a flow undone would show a max FCT without it: every flow of both runs must complete."""
    return {"max_fct_ratio>=3": out["max_fct_ratio_rc_over_mrc"] >= 3,
            "mrc_max<=1.5x_ideal": out["mrc_max_over_ideal"] <= 1.5,
            "completed": bool(out["mrc"]["completed"] and out["rc"]["completed"])}


def _flow_series(raw: dict, fids: set[int]) -> dict[int, list[tuple[float, int]]]:
    ser: dict[int, list[tuple[float, int]]] = {}
    for res in raw["hosts"].values():
        order = res["flow_order"]
        for s in res["samples"]:
            for fid, v in zip(order, s[1:], strict=True):
                if fid in fids:
                    ser.setdefault(fid, []).append((s[0] / 1e9, v))
    return ser


def _bins(ser: dict[int, list[tuple[float, int]]], bin_s: float, end: float) -> list[tuple[float, float]]:
    from mrc_fabric.scenarios.report import goodput_bins

    run = {"elapsed_s": end, "hosts": {"x": {"flow_order": list(ser), "samples": []}}}
    times = sorted({t for s in ser.values() for t, _ in s})
    idx = {fid: 0 for fid in ser}
    last = {fid: 0 for fid in ser}
    for t in times:  # re-sample every series at every sample time (they share the sampling clock)
        for fid, s in ser.items():
            while idx[fid] < len(s) and s[idx[fid]][0] <= t:
                last[fid] = s[idx[fid]][1]
                idx[fid] += 1
        run["hosts"]["x"]["samples"].append([t * 1e9] + [last[f] for f in ser])
    return goodput_bins(run, bin_s)


def case_link_failure(a: argparse.Namespace) -> dict:
    size = 2 * MIB
    at_s = 60e-6
    reroute = a.reroute_us * 1e-6
    sc = scenario(1, 16, 8, 16, size, faults=(FaultSpec(at=at_s, kind="flap", a="p1l1", b="p1s1",
                                                        duration=reroute),),
                  deadline_s=at_s + reroute + 0.002, cc=a.cc)
    out: dict = {"case": "link-failure", "hosts": 128, "fault": "p1l1-p1s1 down at 60 us",
                 "reroute_us": a.reroute_us}
    leaf1 = {f"h{i}" for i in range(1, 17)}
    for mode in ("mrc", "rc"):
        raw, m = _run(sc, mode)
        flows = raw["flows"]
        srtt = (m["srtt_ms_median"] or 0.012) / 1000
        if mode == "mrc":  # every flow from or to leaf 1 sprays some packets over the failed link
            fids = {f["fid"] for f in flows if f["src"] in leaf1 or f["dst"] in leaf1}
            ser = _flow_series(raw, fids)
            bin_s = 2e-6
            bins = _bins(ser, bin_s, raw["elapsed_s"])
            pre = [g for t, g in bins if 20e-6 <= t < at_s - bin_s]
            pre_mean = sum(pre) / len(pre) if pre else 0.0
            rec = goodput_recovery(bins, bin_s, at_s, at_s + 3 * srtt, pre_mean)
            r_s = rec["recovery_s"]
            base_rtt = raw["sim"]["base_rtt_ns"] / 1e9
            # "back to 80%" is the first 2 us bin at the bar after the dip, and these bins swing 0.45-1.6x
            # the mean without any fault (1 us samples of cumulative ACKs): the mean over one base RTT
            # from there says whether the rate stayed back or one bin of a catch-up burst crossed the bar
            held = [g for t, g in bins if r_s is not None and at_s + r_s <= t < at_s + r_s + base_rtt]
            out[mode] = {"affected_flows": len(fids), "pre_fault_mb_s": round(pre_mean, 1),
                         "dip_mb_s": rec["min_mb_s"],
                         "recovery_us": None if r_s is None else round(r_s * 1e6, 1),
                         "recovery_rtts": None if r_s is None else round(r_s / srtt, 2),
                         # scale-failure counts RTTs in the base RTT (report.failure_impact): both here
                         "base_rtt_us": round(raw["sim"]["base_rtt_ns"] / 1e3, 2),
                         "recovery_base_rtts": None if r_s is None else round(r_s / base_rtt, 2),
                         "held_share": round(sum(held) / len(held) / pre_mean, 2) if held and pre_mean else None,
                         "srtt_us": round(srtt * 1e6, 2), "fct_max_us": m["fct_us"]["max"],
                         "completed": m["completed"], **_perf(raw)}
        else:
            # RC flows whose pinned spine (data or ACK direction) is p1s1 and that start or end on leaf 1
            pins = raw["rc_pins"]
            fids = {f["fid"] for f in flows if (f["src"] in leaf1 or f["dst"] in leaf1)
                    and "p1s1" in pins.get(str(f["fid"]), ())}
            st = _stalls(raw, at_s)
            pinned = [st[fid] for fid in fids if fid in st]
            others = [v for fid, v in st.items() if fid not in fids]
            out[mode] = {"pinned_flows": len(fids),
                         "stall_us_min": round(min(pinned) * 1e6, 1) if pinned else None,
                         "stall_us_max": round(max(pinned) * 1e6, 1) if pinned else None,
                         "other_flows_max_stall_us": round(max(others) * 1e6, 1) if others else None,
                         "fct_max_us": m["fct_us"]["max"], "completed": m["completed"],
                         # the FCTs are the completed flows': RC's run ends (its deadline) with some still
                         # in go-back-N, whose FCT is longer than the max printed
                         "flows_done": m["fct_us"]["flows"], "flows": len(flows), **_perf(raw)}
    # in base RTTs, the unit of scale-failure (the srtt under load is longer: until 2026-12-07 the floor
    # counted in it, 28 us = 2.14 srtts = 2.46 base RTTs)
    out["floors"] = {"mrc_recovery<=3_base_rtts": within(out["mrc"]["recovery_base_rtts"], 3),
                     "mrc_rate_held_a_base_rtt": (out["mrc"]["held_share"] or 0) >= 0.8,
                     "mrc_completed": bool(out["mrc"]["completed"]),
                     "rc_pinned_stall>=reroute": bool(out["rc"]["stall_us_min"])
                     and out["rc"]["stall_us_min"] >= a.reroute_us * 0.9}
    return out


def within(rtts: float | None, bar: float) -> bool:
    """A recovery (or stall) of ``rtts`` meets ``bar``: None (never recovered) does not; 0 (goodput never
    fell below the 80% line: report.goodput_recovery) does."""
    return rtts is not None and rtts <= bar


def _stalls(raw: dict, at_s: float) -> dict[int, float]:
    """Per flow: the longest gap without acknowledged progress that starts after ``at_s`` - 20 us."""
    out = {}
    for fid, s in _flow_series(raw, {f["fid"] for f in raw["flows"]}).items():
        best, last_t, last_v = 0.0, 0.0, -1
        for t, v in s:
            if v > last_v:
                if last_v >= 0 and last_t >= at_s - 20e-6:
                    best = max(best, t - last_t)
                last_t, last_v = t, v
        out[fid] = best
    return out


def case_allreduce(a: argparse.Namespace) -> dict:
    hosts, steps, j = 64, 10, a.step_j
    share = 256 << 10  # bytes each host writes to its ring neighbour per step
    out: dict = {"case": "allreduce", "hosts": hosts, "steps": steps, "fault_step": j,
                 "bytes_per_host_per_step": share, "reroute_us": a.reroute_us}
    for mode in ("mrc", "rc"):
        base_sc = scenario(1, 16, 4, 16, share, pattern="allreduce", steps=steps, modes=(mode,), deadline_s=0.05,
                           cc=a.cc)
        raw0, m0 = _run(base_sc, mode)
        st = raw0["step_s"]
        t_j = sum(st[:j - 1]) + st[j - 1] / 2 if len(st) >= j else 0.0
        f = FaultSpec(at=t_j, kind="spine_loss", spine="p1s1", duration=a.reroute_us * 1e-6)
        sc = scenario(1, 16, 4, 16, share, pattern="allreduce", steps=steps, modes=(mode,), faults=(f,),
                      deadline_s=0.05, cc=a.cc)
        raw, m = _run(sc, mode)
        sf = raw["step_s"]
        clean = sorted(st)[len(st) // 2] if st else 0.0
        # the steps that overlap the outage [t_j, t_j + reroute): step j is only the first of them (RC's
        # flows pinned to the spine may be idle in step j's second half and stall in step j + 1)
        out_steps = outage_steps(sf, t_j, t_j + a.reroute_us * 1e-6)
        worst = max(out_steps, key=lambda k: sf[k - 1]) if out_steps else None
        out[mode] = {"clean_step_us_median": round(clean * 1e6, 1),
                     "fault_at_us": round(t_j * 1e6, 1),
                     "faulted_run_step_us": [round(x * 1e6, 1) for x in sf],
                     "step_j_us": round(sf[j - 1] * 1e6, 1) if len(sf) >= j else None,
                     "step_j_inflation": round(sf[j - 1] / clean, 2) if len(sf) >= j and clean else None,
                     "outage_steps": out_steps, "worst_outage_step": worst,
                     "worst_outage_step_us": round(sf[worst - 1] * 1e6, 1) if worst else None,
                     "worst_outage_step_inflation": round(sf[worst - 1] / clean, 2) if worst and clean else None,
                     "job_inflation": round(sum(sf) / sum(st), 3) if st and sum(st) else None,
                     "job_us": round(sum(sf) * 1e6, 1), "clean_job_us": round(sum(st) * 1e6, 1),
                     "completed": m["completed"], "clean_completed": m0["completed"], **_perf(raw)}
    out["floors"] = allreduce_floors(out)
    return out


def allreduce_floors(out: dict) -> dict[str, bool]:
    """The all-reduce case's floors.  Its inflations are ratios of step times: a run that did not finish
    its steps has fewer of them and a job time without the missing ones (smaller, not larger), so every
    run of both modes, with and without the outage, must complete."""
    return {"completed": all(out[mode]["completed"] and out[mode]["clean_completed"] for mode in ("mrc", "rc"))}


def outage_steps(step_s: list[float], t_down: float, t_up: float) -> list[int]:
    """The steps (1-based) of a job whose steps ran back to back for ``step_s`` seconds each that overlap
    the outage ``[t_down, t_up)``."""
    out, t = [], 0.0
    for k, d in enumerate(step_s, 1):
        if t < t_up and t + d > t_down:
            out.append(k)
        t += d
    return out


def case_congested(a: argparse.Namespace) -> dict:
    return _trim_ahead_case("congested", "demo-timescale.yaml", a.congested_seeds, a.cc)


def case_incast(a: argparse.Namespace) -> dict:
    return _trim_ahead_case("incast", "incast-63.yaml", a.incast_seeds, a.cc)


def case_incast_127(a: argparse.Namespace) -> dict:
    return _trim_ahead_case("incast-127", "incast-127.yaml", a.incast_seeds, a.cc)


def _sig(x: float) -> float:
    """``x`` to 4 significant digits (one case is in ms, the other in us: both print in ms)."""
    return float(f"{x:.4g}")


def file_cc(own: str, cc: str) -> str:
    """The congestion control a scenario file's case runs: the file's own ``traffic.cc``, else --cc.  The
    incast files say ``nscc`` (with NSCC parameters of their own), so --cc none still runs them as they
    were recorded."""
    return own or cc


def _trim_ahead_case(case: str, file: str, seeds: int, cc: str) -> dict:
    """``file`` (examples/sim) over ``seeds`` seeds with traffic.trim_ahead as the file has it (2) and 0, and
    the file's traffic.cc, or ``cc`` (--cc) where it has none (:func:`file_cc`)."""
    import dataclasses

    from mrc_fabric.scenarios.spec import load_scenario

    base = load_scenario(os.path.join(EXAMPLES, file))
    cc = file_cc(base.traffic.cc, cc)
    out: dict = {"case": case, "scenario": f"examples/sim/{file}", "seeds": seeds, "cc": cc}  # (what ran)
    for label, after in (("with", base.traffic.trim_ahead or 2), ("without", 0)):
        runs = []
        for seed in range(1, seeds + 1):
            sc = dataclasses.replace(base, seed=seed, traffic=dataclasses.replace(base.traffic, trim_ahead=after,
                                                                                  cc=cc))
            raw, m = _run(sc, "mrc")
            runs.append({"seed": seed, "completed": m["completed"] and not m["data_loss"],
                         # the longest flow stall after a fault (None: the scenario has none)
                         "stall_ms": _sig(max(r["max_flow_stall_s"] for r in m["recovery"]) * 1e3)
                         if m["recovery"] else None,
                         "p99_ms": _sig(m["latency_us"]["p99"] / 1e3), "max_ms": _sig(m["latency_us"]["max"] / 1e3),
                         "srtt_ms": _sig(m["srtt_ms_median"] or 0.0), "trims": m["trims_received"],
                         "ahead": m["trim_resends_ahead"], "completion_s": m["completion_s"],
                         "fct_mean_ms": _sig(m["fct_us"]["mean"] / 1e3),
                         "ev_retired": m["ev_retirements"],
                         "ev_retired_healthy": (m.get("ev_split") or {}).get("retired_healthy", 0), **_perf(raw)})
        n = len(runs)

        def mean(k: str, runs: list = runs) -> float | None:
            xs = [r[k] for r in runs if r[k] is not None]
            return _sig(sum(xs) / len(xs)) if xs else None

        out[label] = {"trim_ahead": after, "runs": runs, "completed": sum(r["completed"] for r in runs),
                      "stall_ms_mean": mean("stall_ms"),
                      "stall_ms_max": max((r["stall_ms"] for r in runs if r["stall_ms"] is not None), default=None),
                      "p99_ms_mean": mean("p99_ms"), "max_ms_mean": mean("max_ms"), "srtt_ms_mean": mean("srtt_ms"),
                      "trims_mean": mean("trims"), "ahead_mean": mean("ahead"),
                      "completion_s_mean": round(sum(r["completion_s"] or 0.0 for r in runs) / n, 6),
                      "fct_ms_mean": mean("fct_mean_ms"), "ev_retired": sum(r["ev_retired"] for r in runs),
                      "ev_retired_healthy": sum(r["ev_retired_healthy"] or 0 for r in runs)}
    w, wo = out["with"], out["without"]
    out["ratio_without_over_with"] = {k: round(wo[k] / w[k], 2) if w[k] and wo[k] is not None else None
                                      for k in ("stall_ms_mean", "stall_ms_max", "p99_ms_mean", "max_ms_mean",
                                                "srtt_ms_mean", "completion_s_mean", "fct_ms_mean")}
    out["floors"] = {"all_completed": w["completed"] == wo["completed"] == seeds,
                     "srtt_within_10pct": w["srtt_ms_mean"] <= 1.1 * wo["srtt_ms_mean"]}
    if case == "congested":  # what the rule is for; incast prints its cost
        out["floors"]["stall_mean_shorter_with"] = w["stall_ms_mean"] < wo["stall_ms_mean"]
    # congestion must cost trims and ECN marks, never a healthy EV: with the rule and without it
    out["floors"]["0_healthy_evs_retired"] = w["ev_retired_healthy"] == 0 == wo["ev_retired_healthy"]
    return out


def case_scale(a: argparse.Namespace) -> dict:
    sc = scenario(8, 32, a.scale_leaves, 32, MIB, modes=("mrc",), deadline_s=0.05, sample_us=5.0, cc=a.cc)
    t0, c0 = time.monotonic(), time.process_time()
    raw, m = _run(sc, "mrc")
    paths = raw["sim"]["paths_per_pair"]
    use = raw["sim"]["ev_use"]
    # "256 paths per pair" must be paths the QP's data took, not only the EVs its profile holds: a 1 MiB
    # flow is 256 frames, so a round robin puts one on each (until 2026-12-07 ~123 of them got its data,
    # up to 5 frames on one: docs/simulation.md "Scale")
    frames = -(-MIB // 4096)
    ev = m["ev_split"]
    return {"case": "scale", "hosts": raw["sim"]["hosts"], "planes": 8, "spines_per_plane": 32,
            "paths_per_pair": paths, "size_bytes": MIB, "completed": m["completed"],
            "fct_mean_us": m["fct_us"]["mean"], "fct_max_us": m["fct_us"]["max"], "ev_use": use,
            # no fault: every EV retired would be a healthy one (the claim: congestion costs trims, not EVs)
            "ev_retired": ev["retired"], "ev_retired_healthy": ev["retired_healthy"] + ev["unknown_path"],
            "trims": m["switch_trims"], "ecn": m["switch_ecn_marks"], "drops": m["switch_drops"],
            "retx": m["retransmissions"],
            "total_wall_s": round(time.monotonic() - t0, 1), "total_cpu_s": round(time.process_time() - c0, 1),
            "floors": {"completed": bool(m["completed"]),
                       "every_qp_used>=90%_of_its_paths": use.get("evs_used_min", 0) >= 0.9 * min(paths, frames),
                       "0_healthy_evs_retired": ev["retired"] == 0},
            **_perf(raw)}


def case_scale_incast(a: argparse.Namespace) -> dict:
    """The scale fabric, no fault, every other host writing ``--scale-incast-kib`` to the first at once:
    congestion at the receiver's 8 NIC ports (up to 1,023:8), which must cost trims and ECN marks, not EVs."""
    size = int(a.scale_incast_kib * 1024)
    sc = scenario(8, 32, a.scale_leaves, 32, size, pattern="incast", modes=("mrc",), deadline_s=0.05,
                  sample_us=5.0, cc=a.scale_cc or a.cc)
    raw, m = _run(sc, "mrc")
    ev = m["ev_split"]
    return {"case": "scale-incast", "cc": a.scale_cc or a.cc, "hosts": raw["sim"]["hosts"], "senders": raw["sim"]["hosts"] - 1,
            "paths_per_pair": raw["sim"]["paths_per_pair"], "size_bytes": size, "completed": m["completed"],
            "fct_mean_us": m["fct_us"]["mean"], "fct_p99_us": m["fct_us"]["p99"], "fct_max_us": m["fct_us"]["max"],
            "completion_us": None if m["completion_s"] is None else round(m["completion_s"] * 1e6, 1),
            # the receiver's 8 x 100 Gb/s take the senders' bytes at best in this long (plus a base RTT)
            "ideal_us": round((raw["sim"]["hosts"] - 1) * size * 8 / 800e9 * 1e6 + raw["sim"]["base_rtt_ns"] / 1e3, 1),
            "srtt_us": round((m["srtt_ms_median"] or 0) * 1000, 2),
            "ev_retired": ev["retired"], "ev_retired_healthy": ev["retired_healthy"] + ev["unknown_path"],
            "healthy_examples": ev["healthy_examples"][:3],
            "trims": m["switch_trims"], "ecn": m["switch_ecn_marks"], "drops": m["switch_drops"],
            "retx": m["retransmissions"],
            "floors": {"completed": bool(m["completed"]), "0_healthy_evs_retired": ev["retired"] == 0},
            **_perf(raw)}


def sim_digest(raw: dict) -> str:
    """A hash of a run's simulated results (events, FCTs, samples, EV events, switch counters, dead-link
    drops): equal for two runs of one scenario and seed, whatever the machine's load."""
    keep = {"events": raw["sim"]["events"], "elapsed_s": raw["elapsed_s"], "faults": raw["faults"],
            "switch_counters": raw["switch_counters"], "dead_link_drops": raw.get("dead_link_drops"),
            "hosts": {n: {k: h[k] for k in ("flows", "samples", "ev_events", "retx", "counters", "srtt_ns")}
                      for n, h in raw["hosts"].items()}}
    return hashlib.sha256(json.dumps(keep, sort_keys=True).encode()).hexdigest()[:16]


def scale_failure_fault(a: argparse.Namespace) -> FaultSpec:
    at, dur = a.scale_fault_us * 1e-6, a.reroute_us * 1e-6
    if a.scale_fault == "spine":
        return FaultSpec(at=at, kind="spine_loss", spine="p1s1", duration=dur)
    return FaultSpec(at=at, kind="flap", a="p1l1", b="p1s1", duration=dur)


def case_scale_failure(a: argparse.Namespace) -> dict:
    """The scale fabric with a leaf-spine link (or spine p1s1) down mid-transfer: the affected flows'
    recovery and stall, EVs retired on failed vs healthy paths, FCT against the same run without it."""
    size = int(a.scale_size_mib * MIB)
    fault = scale_failure_fault(a)
    at = fault.at
    out: dict = {"case": "scale-failure", "size_bytes": size, "fault": fault.label(), "fault_at_us": a.scale_fault_us,
                 "reroute_us": a.reroute_us, "linger_us": a.scale_linger_us}
    clean = None
    for mode in a.scale_modes.split(","):
        runs = {}
        for label, faults in (("clean", ()), ("failure", (fault,))):
            sc = scenario(8, 32, a.scale_leaves, 32, size, modes=(mode,), faults=faults, deadline_s=0.05,
                          sample_us=1.0, linger_s=a.scale_linger_us * 1e-6 if faults else 0.0, cc=a.cc)
            raw, m = _run(sc, mode)
            if a.save_raw:
                os.makedirs(a.save_raw, exist_ok=True)
                with open(os.path.join(a.save_raw, f"scale-failure-{mode}-{label}.json"), "w") as fh:
                    json.dump(raw, fh)
            # the failure run against the clean one (same seed: the same run until the fault)
            imp = failure_impact(raw, at, 2e-6, reference=clean) if faults else None
            if not faults:
                clean = raw
            runs[label] = {"completed": m["completed"], "fct_mean_us": m["fct_us"]["mean"],
                           "fct_p99_us": m["fct_us"]["p99"], "fct_max_us": m["fct_us"]["max"],
                           "done_us": None if raw.get("done_s") is None else round(raw["done_s"] * 1e6, 2),
                           "retx": m["retransmissions"], "digest": sim_digest(raw), **_perf(raw)}
            if imp is not None:
                rec = imp["recovery"]
                runs[label].update({
                    "base_rtt_us": round(imp["base_rtt_s"] * 1e6, 2), "affected_flows": imp["affected_flows"],
                    "affected_packets_lost": imp["affected_packets_lost"], "measured_flows": rec["measured"],
                    "exposure_us_median": _us(imp["exposure_s_median"]), "exposure_us_max": _us(imp["exposure_s_max"]),
                    "exposure_rtts_max": imp["exposure_rtts_max"],
                    "done_before": rec["done_before"], "no_rate_before": rec["no_rate_before"],
                    "not_recovered": rec["not_recovered"][:20], "not_recovered_count": len(rec["not_recovered"]),
                    # each flow: back to 80% of its rate in a rate bin, no dip, or not recovered -- done
                    # with no rate bin back (its completion is no recovery: counted as one until
                    # 2026-12-07) or still running at the end
                    "recovered_count": rec["recovered_count"], "no_dip_count": rec["no_dip_count"],
                    "done_unrecovered": rec["done_unrecovered"][:20],
                    "done_unrecovered_count": rec["done_unrecovered_count"],
                    "running_at_end": rec["running_at_end"][:20], "running_at_end_count": rec["running_at_end_count"],
                    "done_unrecovered_after_us_median": _us(rec["done_unrecovered_after_s_median"]),
                    "done_unrecovered_after_us_max": _us(rec["done_unrecovered_after_s_max"]),
                    "done_unrecovered_after_rtts_max": imp["done_unrecovered_after_rtts_max"],
                    "aggregate_recovery_us": _us(rec["aggregate_recovery_s"]),
                    "aggregate_recovery_rtts": imp["aggregate_recovery_rtts"],
                    "aggregate_held_share": imp["aggregate_held_share"],
                    "aggregate_held_recovery_us": _us(imp["aggregate_held_recovery_s"]),
                    "aggregate_held_recovery_rtts": imp["aggregate_held_recovery_rtts"],
                    "aggregate_min_share": rec["aggregate_min_share"],
                    "recovery_us_median": _us(rec["recovery_s_median"]), "recovery_us_max": _us(rec["recovery_s_max"]),
                    "recovery_rtts_median": imp["recovery_rtts_median"], "recovery_rtts_max": imp["recovery_rtts_max"],
                    "from_loss_us_median": _us(rec["recovery_from_loss_s_median"]),
                    "from_loss_us_max": _us(rec["recovery_from_loss_s_max"]),
                    "from_loss_rtts_median": imp["recovery_from_loss_rtts_median"],
                    "from_loss_rtts_max": imp["recovery_from_loss_rtts_max"],
                    "stall_us_median": _us(rec["stall_s_median"]), "stall_us_max": _us(rec["stall_s_max"]),
                    "stall_rtts_max": imp["stall_rtts_max"], "evs": imp["evs"],
                    "extra_fct_us_median": _us(imp["extra_fct_s_median"]), "extra_fct_us_max": _us(imp["extra_fct_s_max"]),
                    "extra_fct_rtts_max": imp["extra_fct_rtts_max"],
                    "hosts": raw["sim"]["hosts"], "paths_per_pair": raw["sim"]["paths_per_pair"]})
            del raw
        clean = None
        out[mode] = runs
    out["floors"] = {}
    if "mrc" in out:
        _mrc_floors(out)
    if "rc" in out and out["rc"]["failure"]["affected_flows"]:  # (none may be pinned to the failed link)
        out["floors"]["rc_pinned_stall>=reroute"] = (out["rc"]["failure"]["stall_us_max"] or 0) >= a.reroute_us * 0.9
    if "rc" in out:  # RC's FCTs are those of the flows that completed: all of them must have
        out["floors"]["rc_completed"] = bool(out["rc"]["failure"]["completed"] and out["rc"]["clean"]["completed"])
    return out


def _mrc_floors(out: dict) -> None:
    x = out["mrc"]
    f, c = x["failure"], x["clean"]
    out["fct_ratio_failure_over_clean"] = {k: round(f[f"fct_{k}_us"] / c[f"fct_{k}_us"], 3) if c[f"fct_{k}_us"] else None
                                           for k in ("mean", "p99", "max")}
    ev = f["evs"]
    out["floors"] |= {"affected_flows>0": f["affected_flows"] > 0,
                     "every_affected_flow_recovered": f["measured_flows"] > 0 and f["not_recovered_count"] == 0,
                     "mrc_aggregate_recovery<=3_rtts": within(f["aggregate_recovery_rtts"], 3),
                     # back at 80% with the mean over the next base RTT at 80% too (not one bin of a catch-up)
                     "mrc_aggregate_held<=3_rtts": within(f["aggregate_held_recovery_rtts"], 3),
                     "mrc_stall_max<=3_rtts": within(f["stall_rtts_max"], 3),
                     "0_healthy_evs_retired": ev["retired_healthy"] == 0 and ev["unknown_path"] == 0,
                     "completed": f["completed"] and c["completed"]}


def _in(us: float | None, rtts: float | None) -> str:
    """'in X us = Y RTTs', or 'never' (None: not within the run)."""
    return "never" if us is None else f"in {us} us = {rtts} RTTs"


def _us(s: float | None) -> float | None:
    return None if s is None else round(s * 1e6, 2)


def run_case(name: str, a: argparse.Namespace) -> dict:
    t0, c0 = time.monotonic(), time.process_time()
    fn = {"permutation": case_permutation, "link-failure": case_link_failure, "allreduce": case_allreduce,
          "scale": case_scale, "scale-failure": case_scale_failure, "scale-incast": case_scale_incast,
          "congested": case_congested,
          "incast": case_incast, "incast-127": case_incast_127}[name]
    out = fn(a)
    out.setdefault("cc", a.cc)
    out["case_wall_s"] = round(time.monotonic() - t0, 1)
    out["case_cpu_s"] = round(time.process_time() - c0, 1)
    out["peak_rss_mib"] = round(_rss_mib(), 1)
    return out


def _us_or_none(v: float) -> str:
    """An srtt in us, or 'not measured' (the RC baseline keeps none: 0)."""
    return f"{v:.1f} us" if v else "not measured"


def _cc_label(cc: str) -> str:
    """The congestion control a case ran: auto with what it picked per mode, or the one named."""
    return "auto (MRC nscc, RC dcqcn)" if cc == "auto" else cc


def show(r: dict) -> None:
    c = r["case"]
    print(f"== {c}, cc {_cc_label(r['cc'])}: wall {r['case_wall_s']} s, process CPU {r['case_cpu_s']} s, peak RSS {r['peak_rss_mib']} MiB")
    if c == "permutation":
        for mode in ("mrc", "rc"):
            x = r[mode]
            print(f"  {mode.upper():3} FCT mean {x['fct_mean_us']:7.1f} us  p99 {x['fct_p99_us']:7.1f}  max "
                  f"{x['fct_max_us']:7.1f}  srtt {_us_or_none(x['srtt_us'])}  retx {x['retx']}  trims {x['trims']}  "
                  f"ECN {x['ecn']}  drops {x['drops'] or 'none'}  {x['events']} events, "
                  f"{x['events_per_s']} events/s (CPU)")
        print(f"  RC/MRC: mean {r['mean_fct_ratio_rc_over_mrc']}x, max {r['max_fct_ratio_rc_over_mrc']}x "
              f"(htsim ECMP/REPS max {r['htsim_max_ratio']}x: {HTSIM}); RC's max is mostly its go-back-N "
              f"on a trimming fabric: a trimmed packet makes RC's receiver NAK and its sender resend all after it "
              f"(docs/simulation.md)")
        print(f"  MRC max FCT / ideal ({r['ideal_fct_us']} us) = {r['mrc_max_over_ideal']}")
    elif c == "link-failure":
        x, y = r["mrc"], r["rc"]
        print(f"  MRC: {x['affected_flows']} affected flows, {x['pre_fault_mb_s']} MB/s before, dip "
              f"{x['dip_mb_s']} MB/s, back to 80% (one 2 us bin) in {x['recovery_us']} us = "
              f"{x['recovery_base_rtts']} base RTTs ({x['base_rtt_us']} us, the unit of scale-failure) = "
              f"{x['recovery_rtts']} srtts ({x['srtt_us']} us); mean over the next base RTT {x['held_share']}x the "
              f"pre-failure rate; max FCT {x['fct_max_us']} us")
        print(f"  RC:  {y['pinned_flows']} flows pinned to the link stalled {y['stall_us_min']}..{y['stall_us_max']} us "
              f"(link back after {r['reroute_us']} us; other flows' longest stall {y['other_flows_max_stall_us']} us); "
              f"max FCT {y['fct_max_us']} us of the {y['flows_done']} of {y['flows']} flows done by the end of the run "
              f"({r['reroute_us'] / 1000 + 2:g} ms after the failure)")
    elif c == "allreduce":
        for mode in ("mrc", "rc"):
            x = r[mode]
            print(f"  {mode.upper():3} clean step {x['clean_step_us_median']} us; spine p1s1 lost at "
                  f"{x['fault_at_us']} us (step {r['fault_step']}): step {r['fault_step']} took {x['step_j_us']} us "
                  f"= {x['step_j_inflation']}x; worst step during the {r['reroute_us']:g} us outage (steps "
                  f"{x['outage_steps']}): step {x['worst_outage_step']} {x['worst_outage_step_us']} us = "
                  f"{x['worst_outage_step_inflation']}x; job {x['job_us']} us vs {x['clean_job_us']} us clean "
                  f"= {x['job_inflation']}x")
    elif c == "scale-failure" and "mrc" in r:
        f, cl = r["mrc"]["failure"], r["mrc"]["clean"]
        ev = f["evs"]
        print(f"  {f['hosts']} hosts, {f['paths_per_pair']} paths per pair, {r['size_bytes'] / MIB:g} MiB each; "
              f"{r['fault']} at {r['fault_at_us']} us (base RTT {f['base_rtt_us']} us)")
        print(f"  MRC: {f['affected_flows']} flows had packets on the dead link ({f['affected_packets_lost']} packets "
              f"lost there; the last {f['exposure_us_max']} us = {f['exposure_rtts_max']} RTTs after the failure, median "
              f"{f['exposure_us_median']} us); against their rates in the run without it ({f['measured_flows']} "
              f"measured), together down to {f['aggregate_min_share']} of it, back to 80% "
              f"{_in(f['aggregate_recovery_us'], f['aggregate_recovery_rtts'])} (mean over the next RTT "
              f"{f['aggregate_held_share']}x; back with the next RTT's mean at 80% too "
              f"{_in(f['aggregate_held_recovery_us'], f['aggregate_held_recovery_rtts'])})")
        print(f"  each flow: {f['recovered_count']} back to 80% of its rate (a full 2 us bin before its completion "
              f"bin) and {f['no_dip_count']} with no dip (0 us) in median {f['recovery_us_median']} us = {f['recovery_rtts_median']} RTTs, max "
              f"{f['recovery_us_max']} us = {f['recovery_rtts_max']} RTTs (from each one's first packet lost there: "
              f"median {f['from_loss_us_median']} us = {f['from_loss_rtts_median']} RTTs, max {f['from_loss_us_max']} us "
              f"= {f['from_loss_rtts_max']} RTTs); NOT recovered "
              f"{f['not_recovered_count']}: {f['done_unrecovered_count']} completed without a bin back"
              + (f" (completion median {f['done_unrecovered_after_us_median']} us, max "
                 f"{f['done_unrecovered_after_us_max']} us = {f['done_unrecovered_after_rtts_max']} RTTs after the "
                 f"failure; not a recovery time) {f['done_unrecovered'][:10]}" if f["done_unrecovered_count"] else "")
              + f", {f['running_at_end_count']} still running at the end"
              + (f" {f['running_at_end'][:10]}" if f["running_at_end_count"] else ""))
        print(f"  longest stall {f['stall_us_max']} us = {f['stall_rtts_max']} RTTs (median {f['stall_us_median']} us); "
              f"FCT against the same flow without the failure: +{f['extra_fct_us_median']} us median, "
              f"+{f['extra_fct_us_max']} us = {f['extra_fct_rtts_max']} RTTs max")
        print(f"  EVs retired: {ev['retired']} ({ev['retired_crossing']} cross the failed link, "
              f"{ev['retired_healthy']} healthy, {ev['unknown_path']} without a path); back to GOOD "
              f"{ev['back_good']} ({ev['back_good_crossing_after_return']} on the failed link after it returned); "
              f"ASSUMED_BAD at the end: {ev['crossing_still_bad_at_end']} crossing, {ev['healthy_still_bad_at_end']} "
              f"healthy" + (f"; healthy examples {ev['healthy_examples']}" if ev["healthy_examples"] else ""))
        q = r["fct_ratio_failure_over_clean"]
        print(f"  FCT mean/p99/max: failure {f['fct_mean_us']}/{f['fct_p99_us']}/{f['fct_max_us']} us, clean "
              f"{cl['fct_mean_us']}/{cl['fct_p99_us']}/{cl['fct_max_us']} us, ratio {q['mean']}/{q['p99']}/{q['max']}")
    if c == "scale-failure":
        for mode in ("mrc", "rc"):
            for label, x in r.get(mode, {}).items():
                print(f"  {mode.upper()} {label}: {x['events']} events, {x['events_per_s']} events/s (CPU), loop wall "
                      f"{x['wall_s']} s CPU {x['cpu_s']} s, digest {x['digest']}")
        if "rc" in r:
            y = r["rc"]["failure"]
            yc = r["rc"]["clean"]
            print(f"  RC: {y['affected_flows']} flows with packets on the dead link; longest stall {y['stall_us_max']} us "
                  f"(link back after {r['reroute_us']} us); their FCT +{y['extra_fct_us_max']} us max against the same "
                  f"flow without the failure; FCT mean/p99/max {y['fct_mean_us']}/{y['fct_p99_us']}/{y['fct_max_us']} us, "
                  f"without the failure {yc['fct_mean_us']}/{yc['fct_p99_us']}/{yc['fct_max_us']} us (of the flows "
                  f"that completed; all completed: {y['completed']} / {yc['completed']})")
    elif c in ("congested", "incast", "incast-127"):
        print(f"  {r['scenario']}")
        for label in ("with", "without"):
            x = r[label]
            stall = "n/a (no fault)" if x["stall_ms_mean"] is None else \
                f"{x['stall_ms_mean']} ms (max {x['stall_ms_max']})"
            print(f"  trim_ahead {x['trim_ahead']} ({label} the rule), {r['seeds']} seeds: longest flow stall mean "
                  f"{stall}, message p99 {x['p99_ms_mean']} ms, max "
                  f"{x['max_ms_mean']} ms, FCT mean {x['fct_ms_mean']} ms, srtt {x['srtt_ms_mean']} ms, completion "
                  f"{x['completion_s_mean']} s, trims {x['trims_mean']} (ahead {x['ahead_mean']}), completed "
                  f"{x['completed']}, EVs retired {x['ev_retired']} ({x['ev_retired_healthy']} healthy)")
        q = r["ratio_without_over_with"]
        print("  without / with: " + ", ".join(f"{k} {v}" for k, v in q.items()))
    elif c == "scale":
        print(f"  {r['hosts']} hosts, {r['paths_per_pair']} paths per pair, 1 MiB each: completed "
              f"{r['completed']}, FCT mean {r['fct_mean_us']} us max {r['fct_max_us']} us; {r['events']} events, "
              f"{r['events_per_s']} events/s (CPU); sim loop wall {r['wall_s']} s CPU {r['cpu_s']} s")
        print(f"  no fault: EVs retired {r['ev_retired']} ({r['ev_retired_healthy']} healthy); trims {r['trims']}, "
              f"ECN {r['ecn']}, drops {r['drops'] or 'none'}, resent {r['retx']}")
        u = r.get("ev_use") or {}
        if u.get("pairs"):
            print(f"  paths that carried a QP's data: min/median/max {u['evs_used_min']}/{u['evs_used_median']}/"
                  f"{u['evs_used_max']} of {r['paths_per_pair']} per QP ({u['pairs']} QPs); at most "
                  f"{u['max_frames_on_one_ev']} frames on one path, {u['frames_per_pair_max']} per QP")
    elif c == "scale-incast":
        print(f"  {r['hosts']} hosts, {r['paths_per_pair']} paths per pair, cc {r['cc']}, no fault, {r['senders']} senders x "
              f"{r['size_bytes'] >> 10} KiB -> 1: completed {r['completed']} in {r['completion_us']} us (ideal "
              f"{r['ideal_us']} us), FCT mean/p99/max {r['fct_mean_us']}/{r['fct_p99_us']}/{r['fct_max_us']} us, srtt "
              f"{r['srtt_us']} us; trims {r['trims']}, ECN {r['ecn']}, drops {r['drops'] or 'none'}, resent {r['retx']}; "
              f"EVs retired {r['ev_retired']} ({r['ev_retired_healthy']} healthy)"
              + (f"; examples {r['healthy_examples']}" if r["healthy_examples"] else "")
              + f"; {r['events']} events, {r['events_per_s']} events/s (CPU)")
    if "floors" in r:
        print("  floors: " + ", ".join(f"{k}: {'PASS' if v else 'FAIL'}" for k, v in r["floors"].items()))


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default=",".join(DEFAULT_CASES), help=f"any of {', '.join(CASES)}")
    ap.add_argument("--reroute-us", type=float, default=500.0, help="time until a failed link/spine is back")
    ap.add_argument("--step-j", type=int, default=4, help="allreduce: the step during which the spine fails")
    ap.add_argument("--scale-leaves", type=int, default=32, help="scale case: leaves per plane (32 hosts each)")
    ap.add_argument("--scale-size-mib", type=float, default=4.0,
                    help="scale-failure: MiB per flow (2: the flows finish before their rate is back)")
    ap.add_argument("--scale-incast-kib", type=float, default=64.0, help="scale-incast: KiB per sender")
    ap.add_argument("--cc", choices=CCS, default="auto",
                    help="every case's congestion control (traffic.cc): auto, NSCC for MRC and DCQCN for RC as the "
                         "emulation and the NICs run; none: no window, as every case ran until 2026-12-07")
    ap.add_argument("--scale-cc", choices=CCS, default=None,
                    help="scale-incast: its congestion control, if not --cc's")
    ap.add_argument("--scale-fault", choices=("link", "spine"), default="link",
                    help="scale-failure: link p1l1-p1s1 or the whole spine p1s1")
    ap.add_argument("--scale-fault-us", type=float, default=10.0, help="scale-failure: when the fault happens")
    ap.add_argument("--scale-linger-us", type=float, default=0.0,
                    help="scale-failure: keep simulating this long after the traffic completes (EVs back to GOOD)")
    ap.add_argument("--scale-modes", default="mrc,rc", help="scale-failure: mrc, rc or mrc,rc")
    ap.add_argument("--save-raw", default="", help="scale-failure: write each run's raw result here (JSON)")
    ap.add_argument("--congested-seeds", type=int, default=6, help="congested: seeds per setting (~5 s a run)")
    ap.add_argument("--incast-seeds", type=int, default=1,
                    help="incast, incast-127: seeds per setting (~10 s, ~45 s a run)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    return ap


def main() -> int:
    ap = parser()
    a = ap.parse_args()
    if a.one:
        print(json.dumps(run_case(a.one, a)))
        return 0
    results = []
    for name in a.cases.split(","):
        if name not in CASES:
            ap.error(f"unknown case {name!r} ({', '.join(CASES)})")
        cmd = [sys.executable, __file__, "--one", name, "--reroute-us", str(a.reroute_us), "--step-j", str(a.step_j),
               "--scale-leaves", str(a.scale_leaves), "--scale-size-mib", str(a.scale_size_mib),
               "--scale-incast-kib", str(a.scale_incast_kib), "--scale-cc", a.scale_cc or a.cc, "--cc", a.cc, "--scale-fault",
               a.scale_fault, "--scale-fault-us", str(a.scale_fault_us),
               "--scale-linger-us", str(a.scale_linger_us), "--scale-modes", a.scale_modes, "--save-raw", a.save_raw,
               "--congested-seeds", str(a.congested_seeds), "--incast-seeds", str(a.incast_seeds)]
        p = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if p.returncode != 0:
            print(f"== {name}: FAILED\n{p.stderr[-3000:]}")
            results.append({"case": name, "error": p.stderr[-3000:]})
            continue
        r = json.loads(p.stdout.strip().splitlines()[-1])
        results.append(r)
        if not a.json:
            show(r)
            sys.stdout.flush()
    if a.json:
        print(json.dumps(results, indent=1))
    # as bench/mrc_sim.py: a failed case or a FAIL floor is a non-zero exit, not only a word in the output
    failed = [r["case"] for r in results if "error" in r or not all(r.get("floors", {}).values())]
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
