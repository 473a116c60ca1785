"""Turn the raw per-host results of a run into metrics, a timeline and a summary (text)."""
from __future__ import annotations

from collections import Counter
from itertools import pairwise
from typing import Any

RECOVERED_FRACTION = 0.8  # goodput "recovered" once a bin reaches this share of the pre-failure mean


def _pct(vals: list[float], q: float) -> float:
    if not vals:
        return 0.0
    k = max(0, min(len(vals) - 1, int(-(-q * len(vals) // 1)) - 1))
    return vals[k]


def _series(run: dict[str, Any]) -> dict[int, list[tuple[float, int]]]:
    """Per flow id: [(t_s, acked bytes)] from the senders' samples."""
    out: dict[int, list[tuple[float, int]]] = {}
    for res in run["hosts"].values():
        order = res["flow_order"]
        for s in res["samples"]:
            for fid, v in zip(order, s[1:], strict=True):
                out.setdefault(int(fid), []).append((s[0] / 1e9, v))
    return out


def _at(series: list[tuple[float, int]], t: float) -> int:
    v = 0
    for ts, x in series:
        if ts > t:
            break
        v = x
    return v


def goodput_bins(run: dict[str, Any], bin_s: float) -> list[tuple[float, float]]:
    """Aggregate goodput (MB/s of acknowledged payload) per bin: [(bin start s, MB/s)]."""
    ser = _series(run)
    end = run["elapsed_s"]
    n = max(1, int(end / bin_s + 0.999))
    edges = [i * bin_s for i in range(n + 1)]
    acc = [sum(_at(s, t) for s in ser.values()) for t in edges]
    return [(edges[i], (acc[i + 1] - acc[i]) / bin_s / 1e6) for i in range(n)]


def flow_stalls(run: dict[str, Any], t_fault: float) -> dict[int, dict[str, Any]]:
    """Per flow: the longest time without progress that overlaps ``t_fault`` or comes after it."""
    size = {f["fid"]: None for f in run["flows"]}
    totals = {}
    for res in run["hosts"].values():
        for fid, f in res["flows"].items():
            totals[int(fid)] = f["count"] * f["size"]
    out = {}
    for fid, s in _series(run).items():
        if fid not in size:
            continue
        best, best_start, open_end = 0.0, None, False
        last_inc_t, last_v = 0.0, 0
        for ts, v in s:
            if v > last_v:
                gap = ts - last_inc_t
                if ts > t_fault and gap > best:
                    best, best_start = gap, last_inc_t
                last_inc_t, last_v = ts, v
        if last_v < totals.get(fid, 0):  # never finished: the gap runs to the end of the run
            gap = run["elapsed_s"] - last_inc_t
            if gap > best:
                best, best_start, open_end = gap, last_inc_t, True
        out[fid] = {"stall_s": round(best, 4), "from_s": best_start, "until_end": open_end}
    return out


def analyse(run: dict[str, Any], bin_ms: float = 100.0, sample_ms: float = 20.0) -> dict[str, Any]:
    """Metrics of one run: completion, delivered/verified bytes, goodput, recovery, retransmissions, EVs."""
    hosts = run["hosts"].values()
    lat = sorted(x for h in hosts for f in h["flows"].values() for x in f["lat_us"])
    done_bytes = sum(f["done"] * f["size"] for h in hosts for f in h["flows"].values())
    failed = sum(f["failed"] for h in hosts for f in h["flows"].values())
    checked = sum(v["bytes_checked"] for h in hosts for v in h["verify"].values())
    bad = sum(v["bad_count"] for h in hosts for v in h["verify"].values())
    last = [f["last_done_ns"] for h in hosts for f in h["flows"].values() if f["last_done_ns"] is not None]
    completion = max(last) / 1e9 if run["completed"] and last and not failed else None
    retx = Counter()
    ctr = Counter()
    for h in hosts:
        retx.update(h["retx"])
        ctr.update(h["counters"])
    evs = [e for h in hosts for e in h["ev_events"]]
    ev_changes = Counter(f"{e[4]}->{e[5]} ({e[6]})" for e in evs)
    bins = goodput_bins(run, bin_ms / 1000)
    srtt = sorted(x for h in hosts for x in h["srtt_ns"])
    sw_drops: Counter = Counter()
    sw_cong: Counter = Counter()
    for c in run.get("switch_counters", {}).values():
        sw_drops.update(c["drops"])
        sw_cong.update(c.get("congestion", {}))
    cong_by_s: dict[int, Counter] = {}
    for t_end, counts in congestion_series(run):
        cong_by_s.setdefault(max(0, int(t_end - 1e-9)), Counter()).update(counts)
    recov = []
    downs = [f for f in run["faults"] if f.get("down")]
    for f in downs:
        tf = f["t_s"]
        pre = [g for t, g in bins if tf - 1.0 <= t < tf - bin_ms / 1000]
        pre_mean = sum(pre) / len(pre) if pre else 0.0
        after = [(t, g) for t, g in bins if t >= tf]
        rec_t = next((t + bin_ms / 1000 - tf for t, g in after if pre_mean and g >= RECOVERED_FRACTION * pre_mean),
                     None)
        stalls = flow_stalls(run, tf)
        affected = {fid: s for fid, s in stalls.items() if s["stall_s"] > 3 * sample_ms / 1000 and
                    (s["from_s"] or 0) <= tf + 1.0}
        recov.append({"fault": f["fault"], "t_s": tf, "pre_mb_s": round(pre_mean, 3),
                      "min_mb_s_after": round(min((g for _, g in after[:20]), default=0.0), 3),
                      "goodput_recovery_s": None if rec_t is None else round(rec_t, 3),
                      "max_flow_stall_s": round(max((s["stall_s"] for s in stalls.values()), default=0.0), 4),
                      "stalled_until_end": sorted(fid for fid, s in stalls.items() if s["until_end"]),
                      "affected_flows": sorted(affected)})
    return {
        "mode": run["mode"], "completed": run["completed"] and not failed and done_bytes == run["total_bytes"],
        "completion_s": None if completion is None else round(completion, 3),
        "elapsed_s": round(run["elapsed_s"], 3), "deadline_s": run["deadline_s"],
        "total_bytes": run["total_bytes"], "delivered_bytes": done_bytes, "failed_messages": failed,
        "verified_bytes": checked, "corrupt_messages": bad,
        "data_loss": bad > 0 or failed > 0,
        "goodput_mb_s": round(done_bytes / max(completion or run["elapsed_s"], 1e-9) / 1e6, 3),
        "latency_us": {"p50": _pct(lat, 0.5), "p99": _pct(lat, 0.99), "p999": _pct(lat, 0.999),
                       "max": lat[-1] if lat else 0.0, "messages": len(lat)},
        "retransmissions": dict(retx), "retransmissions_total": sum(retx.values()),
        "trims_received": ctr["trims_received"], "ecn_echoes": ctr["ecn_echoes"],
        "duplicates_received": ctr["duplicates_received"], "timeouts": ctr["timeouts"],
        "ev_changes": dict(ev_changes), "ev_events": sorted(evs),
        "srtt_ms_median": round(srtt[len(srtt) // 2] / 1e6, 3) if srtt else None,
        "switch_drops": dict(sw_drops),
        "switch_trims": sw_cong["trimmed"], "switch_ecn_marks": sw_cong["ecn_marked"],
        "switch_early_drops": sw_cong["early_drop"],
        "switch_congestion_per_s": {s: dict(c) for s, c in sorted(cong_by_s.items())},
        "goodput_bins": [(round(t, 3), round(g, 3)) for t, g in bins],
        "recovery": recov, "faults": run["faults"],
        "errors": [e for h in hosts for e in h["errors"]],
    }


def congestion_series(run: dict[str, Any]) -> list[tuple[float, dict[str, int]]]:
    """Switch trims / CE marks / early drops (all switches) in each sampling interval: [(end s, counts)]."""
    out = []
    samples = run.get("congestion_samples") or []
    for (_t_a, a), (t_b, b) in pairwise(samples):
        acc: Counter = Counter()
        for sw, cur in b.items():
            prev = a.get(sw, {})
            for ev, n in cur.items():
                p = prev.get(ev, 0)
                acc[ev] += n - p if n >= p else n  # a restarted switch counts from 0
        out.append((t_b, dict(acc)))
    return out


def per_second(m: dict[str, Any]) -> list[tuple[int, float]]:
    """Goodput per whole second from the bins."""
    acc: dict[int, list[float]] = {}
    for t, g in m["goodput_bins"]:
        acc.setdefault(int(t), []).append(g)
    return [(s, sum(v) / len(v)) for s, v in sorted(acc.items())]


def timeline_lines(m: dict[str, Any]) -> list[str]:
    """Per-second goodput with the faults, EV changes and retransmissions of each second."""
    lines = [f"timeline ({m['mode']}):  second  goodput MB/s  EV->BAD  EV->GOOD  sw trims  sw ECN  faults"]
    evs_by_s: dict[int, Counter] = {}
    for e in m["ev_events"]:
        evs_by_s.setdefault(int(e[0] / 1e9), Counter())[e[5]] += 1
    faults_by_s: dict[int, list[str]] = {}
    for f in m["faults"]:
        faults_by_s.setdefault(int(f["t_s"]), []).append(f"{f.get('did', f['fault'])} @{f['t_s']:.2f}s")
    cong = {int(k): v for k, v in m.get("switch_congestion_per_s", {}).items()}
    for s, g in per_second(m):
        c = evs_by_s.get(s, Counter())
        k = cong.get(s, {})
        lines.append(f"  {s:>6}  {g:11.2f}  {c['ASSUMED_BAD']:7}  {c['GOOD']:8}  {k.get('trimmed', 0):8}  "
                     f"{k.get('ecn_marked', 0):6}  {'; '.join(faults_by_s.get(s, []))}")
    r = m["retransmissions"]
    lines.append(f"  retransmissions by cause: rack {r.get('rack', 0)}, timeout {r.get('timeout', 0)}, "
                 f"trim {r.get('trim', 0)}, nak (go-back-N) {r.get('nak', 0)}")
    lines.append("  EV state changes: " + (", ".join(f"{k} x{v}" for k, v in sorted(m["ev_changes"].items()))
                                           or "none"))
    lines.append(f"  switches: trimmed {m.get('switch_trims', 0)}, CE-marked {m.get('switch_ecn_marks', 0)}, "
                 f"dropped early {m.get('switch_early_drops', 0)}; drops by reason {m['switch_drops'] or 'none'}")
    lines.append(f"  endpoints: trims received (trim NACKs sent) {m['trims_received']}, ECN echoes {m['ecn_echoes']}")
    return lines


def summary_lines(m: dict[str, Any]) -> list[str]:
    """One paragraph per run: completion, data integrity, latency, recovery after each fault."""
    done = (f"completed in {m['completion_s']:.2f} s" if m["completed"] else
            f"DID NOT COMPLETE within {m['elapsed_s']:.1f} s")
    lines = [(f"{m['mode']}: {done}; delivered {m['delivered_bytes'] / 1e6:.1f} of {m['total_bytes'] / 1e6:.1f} MB, "
             f"{m['verified_bytes'] / 1e6:.1f} MB verified byte for byte, corrupt messages {m['corrupt_messages']}, "
             f"failed messages {m['failed_messages']}; goodput {m['goodput_mb_s']:.2f} MB/s; message latency "
             f"p50 {m['latency_us']['p50'] / 1000:.1f} ms p99 {m['latency_us']['p99'] / 1000:.1f} ms; "
             f"srtt {m['srtt_ms_median']} ms")]
    for r in m["recovery"]:
        rec = "not within the run" if r["goodput_recovery_s"] is None else f"{r['goodput_recovery_s'] * 1000:.0f} ms"
        lines.append(f"  after {r['fault']} @{r['t_s']:.2f}s: goodput {r['pre_mb_s']:.2f} -> min "
                     f"{r['min_mb_s_after']:.2f} MB/s, back to {int(RECOVERED_FRACTION * 100)}% in {rec}; longest flow "
                     f"stall {r['max_flow_stall_s'] * 1000:.0f} ms; flows stalled until the end: "
                     f"{r['stalled_until_end'] or 'none'}")
    return lines
