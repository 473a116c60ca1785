"""Turn the raw per-host results of a run into metrics, a timeline and a summary (text)."""
from __future__ import annotations

import gc
from bisect import bisect_left, bisect_right
from collections import Counter
from itertools import pairwise
from typing import Any

from controller.telemetry import EVENT_EARLY_DROP, EVENT_ECN_MARKED, EVENT_TRIMMED
from mrc.core.types import evidence_text

RECOVERED_FRACTION = 0.8  # goodput "recovered" once a bin reaches this share of the pre-failure mean
DIP_WINDOW_RTTS = 3.0  # a failure's dip is looked for this many median srtts after it (or until the next one)
RECOVERY_HORIZON_S = 0.3  # ...or this long when the run has no RTT samples (the RC baseline)
MIN_POST_BINS = 5  # the post-failure rate needs at least this many bins, else the pre-failure rate is the reference
LATE_KEPT = 20  # analyse keeps this many of the packets that held a cumulative ACK longest


def dur(s: float) -> str:
    """A duration in the unit that suits it: us for simulated datacenter runs, ms or s for the emulation."""
    if s < 0.01:
        return f"{s * 1e6:.1f} us"
    if s < 10:
        return f"{s * 1000:.0f} ms"
    return f"{s:.2f} s"


def timeline_period(elapsed_s: float) -> float:
    """Row length of the timeline: a second for the emulation, a tenth of the run when it is short."""
    return 1.0 if elapsed_s >= 5 else max(elapsed_s / 10, 1e-9)


def _pct(vals: list[float], q: float) -> float:
    if not vals:
        return 0.0
    k = max(0, min(len(vals) - 1, int(-(-q * len(vals) // 1)) - 1))
    return vals[k]


Series = dict[int, list[tuple[float, int]]]


def _series(run: dict[str, Any], fids: Any = None) -> Series:
    """Per flow id: [(t_s, acked bytes)] from the senders' samples; with ``fids``, only those flows' (a
    host that sends none of them is not read).

    A simulated fabric's run holds hosts x sample instants values (12.6 M for 1,024 hosts sampled every
    microsecond for 12 ms), so this is the analysis' costliest step: each host's samples are read once,
    as columns (their times converted once, each flow's column paired with them), and :func:`analyse`
    and :func:`flow_recovery` build the series once per run and hand it to the functions they call
    (until 2026-12-07 each of those rebuilt it: 8 times for the bench's two scale-failure runs of a
    mode: 90 s of CPU for a synthetic run of the 1,024-host RC run's size, 29 s now; bench/README.md
    "Stop 60").  :func:`flow_recovery` asks only for the flows it measures (those with packets on the
    failed link: 64 of 1,024 in the MRC run, none in RC's), for the run and for its reference."""
    out: Series = {}
    want = None if fids is None else {int(f) for f in fids}
    to_s = (1e9).__rtruediv__  # t_ns -> t_ns / 1e9, the same float
    paused = gc.isenabled()
    if paused:  # millions of new tuples and no cycle among them: a full collection per few hundred
        gc.disable()  # thousand of them would walk the whole run (the samples) each time
    try:
        for name, res in run["hosts"].items():
            order = res["flow_order"]
            samples = res["samples"]
            if not samples or (want is not None and not any(int(f) in want for f in order)):
                continue
            n = len(order) + 1
            if set(map(len, samples)) != {n}:
                raise ValueError(f"host {name}: a sample does not hold one value per flow of its flow_order "
                                 f"({len(order)} flows)")
            cols = list(zip(*samples))
            times = list(map(to_s, cols[0]))
            for fid, col in zip(order, cols[1:]):
                if want is None or int(fid) in want:
                    out.setdefault(int(fid), []).extend(zip(times, col))
    finally:
        if paused:
            gc.enable()
    return out


def _flow_totals(run: dict[str, Any]) -> dict[int, int]:
    """Per flow id: the bytes it has to move (messages x size), from the senders' results."""
    return {int(fid): f["count"] * f["size"] for res in run.get("hosts", {}).values()
            for fid, f in res.get("flows", {}).items()}


def _at(series: list[tuple[float, int]], t: float) -> int:
    """The value of a sample series at time ``t`` (the last sample at or before it)."""
    i = bisect_right(series, t, key=lambda x: x[0])
    return series[i - 1][1] if i else 0


def goodput_bins(run: dict[str, Any], bin_s: float, ser: Series | None = None) -> list[tuple[float, float]]:
    """Aggregate goodput (MB/s of acknowledged payload) per bin: [(bin start s, MB/s)].  ``ser``:
    :func:`_series` of ``run`` when the caller has it."""
    ser = _series(run) if ser is None else ser
    end = run["elapsed_s"]
    n = max(1, int(end / bin_s + 0.999))
    edges = [i * bin_s for i in range(n + 1)]
    acc = [0] * (n + 1)
    for s in ser.values():  # one pass per series: the edges and the samples are both in time order
        j, v = 0, 0
        for i, t in enumerate(edges):
            while j < len(s) and s[j][0] <= t:
                v = s[j][1]
                j += 1
            acc[i] += v
    return [(edges[i], (acc[i + 1] - acc[i]) / bin_s / 1e6) for i in range(n)]


def goodput_recovery(bins: list[tuple[float, float]], bin_s: float, t_fault: float, horizon: float,
                     pre_mean: float) -> dict[str, Any]:
    """How long goodput took to come back after a failure at ``t_fault``.

    The dip is the lowest bin that overlaps ``[t_fault, horizon)``; recovery is the end of the first
    bin from there on that reaches ``RECOVERED_FRACTION`` of ``pre_mean``, measured from the failure.
    A failure whose lowest bin stays at or above that share made no dip: recovery 0.  ``None``: goodput
    never came back within the run (e.g. capacity was lost for good).  Looking for the lowest bin
    first matters: the bins right after a failure still carry packets sent before it, and the first of
    them is usually above the bar although the dip is still to come.  The horizon (``analyse``: three
    median srtts) matters too: packets lost at the failure are missing from the ACK stream one RTT
    later, so its dip starts within about two; a lower bin later on is the emulation's scheduling noise
    (a 20-30 ms pause of every process at once happens about once a second on 2 shared cores).
    """
    out: dict[str, Any] = {"recovery_s": None, "min_mb_s": 0.0, "min_at_s": None}
    if not pre_mean:
        return out
    bar = RECOVERED_FRACTION * pre_mean
    idx = [i for i, (t, _) in enumerate(bins) if t + bin_s > t_fault and t < horizon]
    if not idx:
        return out
    low = min(idx, key=lambda i: bins[i][1])
    out["min_mb_s"] = round(bins[low][1], 3)
    out["min_at_s"] = round(bins[low][0] - t_fault, 9)
    if bins[low][1] >= bar:
        out["recovery_s"] = 0.0
        return out
    back = next((i for i in range(low + 1, len(bins)) if bins[i][1] >= bar), None)
    if back is not None:
        out["recovery_s"] = round(bins[back][0] + bin_s - t_fault, 9)
    return out


def acked_curve(run: dict[str, Any], ser: Series | None = None) -> tuple[list[float], list[float]]:
    """The run's acknowledged bytes summed over its flows, as a piecewise-linear curve: (times s, bytes)
    at every sample instant of any host.  Each flow's counter is interpolated linearly between its own
    samples (0 before its first, its last value after its last), so the sum is exact at those instants
    and linear between them.  One sweep over the samples' slope changes (a simulated fabric has
    thousands of flows, each with its own sample times).  ``ser``: :func:`_series` of ``run`` when the
    caller has it."""
    events: list[tuple[float, float, float]] = []  # (t, step in value, change of slope)
    for s in (_series(run) if ser is None else ser).values():
        if not s:
            continue
        events.append((s[0][0], float(s[0][1]), 0.0))
        slope = 0.0
        for (t0, v0), (t1, v1) in pairwise(s):
            if t1 <= t0:  # two samples at one instant: the later value from then on
                events.append((t1, float(v1 - v0), -slope))
                slope = 0.0
                continue
            new = (v1 - v0) / (t1 - t0)
            events.append((t0, 0.0, new - slope))
            slope = new
        events.append((s[-1][0], 0.0, -slope))
    events.sort(key=lambda e: e[0])
    ts: list[float] = []
    ys: list[float] = []
    val, slope, last = 0.0, 0.0, None
    for t, step, dslope in events:
        if last is not None:
            val += slope * (t - last)
        val += step
        slope += dslope
        last = t
        if ts and ts[-1] == t:
            ys[-1] = val
        else:
            ts.append(t)
            ys.append(val)
    return ts, ys


def _curve_at(ts: list[float], ys: list[float], t: float) -> float:
    """A piecewise-linear curve's value at ``t`` (flat before its first and after its last point)."""
    i = bisect_right(ts, t)
    if i == 0:
        return ys[0] if ys else 0.0
    if i == len(ts):
        return ys[-1]
    t0, t1 = ts[i - 1], ts[i]
    return ys[i - 1] + (ys[i] - ys[i - 1]) * (t - t0) / (t1 - t0)


def goodput_recovery_sliding(run: dict[str, Any], window_s: float, t_fault: float, horizon: float,
                             ref: float, curve: tuple[list[float], list[float]] | None = None,
                             hold_s: float | None = None) -> dict[str, Any]:
    """:func:`goodput_recovery` with the same window width but at any phase: the goodput at time ``t`` is
    the acknowledged bytes of the window ``[t - window_s, t]`` (from :func:`acked_curve`) over its width.

    The dip is the lowest such window that overlaps ``[t_fault, horizon)`` (the last of several as low:
    two full stalls with a burst between them are one dip); recovery is the first ``t`` after it whose
    window reaches ``RECOVERED_FRACTION`` of ``ref`` and stays there: every window ending in
    ``[t, t + hold_s]`` is at the bar (``hold_s``: one window width unless given; 0 is the first touch).
    The instant is found exactly on the piecewise-linear curve and measured from the failure.  A window
    that touches the bar and falls back within the hold is not a recovery: where goodput hovers near the
    bar the first touch is a minimum over phases and reads early (a kept run read 1.01 RTTs for a
    return that held from ~4.9).  A hold that would end after the curve's last sample (the run ended
    first) is not a recovery: ``None``.  A window is a measurement only between the curve's first and
    last samples: the dip is looked for among those.  Like the bins' figure it is the end of a window back at the bar,
    never a time before a full window says so; unlike it, the window's end is not
    held to a grid fixed at the run's start, which adds 0 to one window width (a uniform phase: half a
    window on average) to every figure.  The curve's resolution is the hosts' sample period (5 ms).
    Same keys as :func:`goodput_recovery`: ``recovery_s``, ``min_mb_s``, ``min_at_s`` (the dip window's
    start from the failure).  ``curve``: :func:`acked_curve` of ``run`` when the caller has it."""
    out: dict[str, Any] = {"recovery_s": None, "min_mb_s": 0.0, "min_at_s": None}
    ts, ys = curve if curve is not None else acked_curve(run)
    if not ref or not ts or window_s <= 0:
        return out
    bar = RECOVERED_FRACTION * ref * 1e6 * window_s  # bytes per window

    def w(t: float) -> float:
        return _curve_at(ts, ys, t) - _curve_at(ts, ys, t - window_s)

    # window ends where w(t) can change slope: the curve's points and the points a window later
    ends = sorted({t for t in ts} | {t + window_s for t in ts})
    last = ts[-1]  # the run's last sample: no window ends after it (the flat curve there is no measurement)
    # nor starts before the first: the curve is flat there too, and a window reaching back before it read
    # as a dip (a failure within a window of the first sample: 0 MB/s, "recovered" 26 ms later at a
    # steady rate whose bins saw no dip)
    first = ts[0] + window_s - 1e-12
    cand = [t for t in ends if t > t_fault and t - window_s < horizon and first <= t <= last]
    if not cand:
        return out
    # w is linear between consecutive ends: its minimum is at one of them.  Of several windows at that
    # minimum (full stalls: 0 bytes), the last: a burst between two stalls of the dip window (the SACKed
    # data a resend releases) is not the recovery (h-demo11's ab-base1: the first empty window ended at
    # +114 ms, a 15 ms burst followed, then nothing arrived from +145 to +205 ms)
    vals = [(t, w(t)) for t in cand]
    lowest = min(v for _, v in vals)
    low = [t for t, v in vals if v <= lowest][-1]
    out["min_mb_s"] = round(w(low) / window_s / 1e6, 3)
    out["min_at_s"] = round(low - window_s - t_fault, 9)
    if w(low) >= bar:
        out["recovery_s"] = 0.0
        return out
    hold = window_s if hold_s is None else hold_s
    eps = 1e-12
    prev, wp, start = low, w(low), None  # start: where the current stretch at the bar began
    for t in ends[bisect_right(ends, low):]:  # a hold must end by the run's last sample
        wt = w(t)  # w is linear on [prev, t]: the bar is crossed at most once in it
        if start is None and wt >= bar:
            start = prev if wp >= bar else prev + (t - prev) * (bar - wp) / (wt - wp)
        elif start is not None and wt < bar:
            fall = prev + (t - prev) * (wp - bar) / (wp - wt)
            if fall >= start + hold - eps:
                break
            start = None  # a touch and go: fell back before the hold was over
        if start is not None and start + hold > last + eps:
            return out  # the run ended before the return held
        if start is not None and t >= start + hold - eps:
            break
        prev, wp = t, wt
    else:
        return out
    if start is not None:
        out["recovery_s"] = round(start - t_fault, 9)
    return out


def pre_failure_mean(bins: list[tuple[float, float]], bin_s: float, t_fault: float, window_s: float = 1.0) -> float:
    """Mean goodput before a failure at ``t_fault``: the bins of the ``window_s`` before it, but for the
    last one (it may hold the failure's start), from the first bin with any acknowledged bytes on -- the
    bins before the first ACK hold nothing because the transfers had not begun, not because the fabric
    carried nothing (a simulated run with a failure at 50 us has 2 such bins of 10: counted, they took
    the pre-failure rate and the "back to 80%" bar a fifth below the rate the fabric carried)."""
    start = next((t for t, g in bins if g > 0), None)
    if start is None:
        return 0.0
    pre = [g for t, g in bins if max(t_fault - window_s, start) <= t < t_fault - bin_s]
    return sum(pre) / len(pre) if pre else 0.0


def first_flow_done(run: dict[str, Any], series: Series | None = None) -> float | None:
    """When the first flow had every byte acknowledged (s), from the senders' samples; None if none did
    (or the run has no per-flow samples).  ``series``: :func:`_series` of ``run`` when the caller has it."""
    totals = _flow_totals(run)
    first = None
    for fid, ser in ((_series(run) if series is None else series).items() if totals else ()):
        total = totals.get(fid)
        if total:
            t = next((ts for ts, v in ser if v >= total), None)
            if t is not None and (first is None or t < first):
                first = t
    return first


def post_failure_rate(run: dict[str, Any], bins: list[tuple[float, float]], bin_s: float, t_fault: float,
                      window: float, ser: Series | None = None) -> float | None:
    """Mean goodput the fabric carries once it has settled after a failure at ``t_fault``: the bins from
    two dip windows after it, for as long as the pre-failure mean's window (1 s), up to the next fault
    event (a failure, or an undo), the first flow's completion (from then on fewer flows offer load, and
    the rate falls for that reason, not for capacity lost: in a simulated demo the reference was 55%
    of the pre-failure rate after a spine loss that took 25% of the capacity, until 2026-12-06) and the
    end of the run.  None with fewer than ``MIN_POST_BINS`` bins.  Measured in the demo: a link or a
    spine lost leaves 0.71-0.86 of the pre-failure rate (docs/demo.md).  ``ser``: :func:`_series` of
    ``run`` when the caller has it."""
    start = t_fault + 2 * window
    end = min([start + 1.0, run["elapsed_s"]] + [f["t_s"] for f in run["faults"] if f["t_s"] > t_fault])
    done = first_flow_done(run, ser)
    for stop in ([done] if done is not None and t_fault < done < end else []) + [end]:
        post = [g for t, g in bins if t >= start and t + bin_s <= stop]
        if len(post) >= MIN_POST_BINS:  # (too few before the first completion: the window as before it)
            return sum(post) / len(post)
    return None


def flow_stalls(run: dict[str, Any], t_fault: float, begun_before: float | None = None,
                ser: Series | None = None) -> dict[int, dict[str, Any]]:
    """Per flow: the longest time without progress that overlaps ``t_fault`` or comes after it (with
    ``begun_before``: of those that began before that time).  ``ser``: :func:`_series` of ``run`` when
    the caller has it."""
    size = {f["fid"]: None for f in run["flows"]}
    totals = _flow_totals(run)
    out = {}
    for fid, s in (_series(run) if ser is None else ser).items():
        if fid not in size:
            continue
        best, best_start, open_end = 0.0, None, False
        last_inc_t, last_v = 0.0, 0
        for ts, v in s:
            if v > last_v:
                gap = ts - last_inc_t
                if ts > t_fault and gap > best and (begun_before is None or last_inc_t < begun_before):
                    best, best_start = gap, last_inc_t
                last_inc_t, last_v = ts, v
        if last_v < totals.get(fid, 0):  # never finished: the gap runs to the end of the run
            gap = run["elapsed_s"] - last_inc_t
            if gap > best and (begun_before is None or last_inc_t < begun_before):
                best, best_start, open_end = gap, last_inc_t, True
        out[fid] = {"stall_s": round(best, 9), "from_s": best_start, "until_end": open_end}
    return out


def failure_stall(run: dict[str, Any], t_fault: float, horizon_s: float, ser: Series | None = None) -> float:
    """The longest flow stall a failure at ``t_fault`` can have caused: of the gaps in a flow's progress
    that end after it, those begun before ``horizon_s`` (the end of its dip window).  A gap that began
    later is congestion's (on the emulated fabric the longest stall "after the failure" began 2.5 s after
    it in one of four runs).  ``ser``: :func:`_series` of ``run`` when the caller has it."""
    return round(max((s["stall_s"] for s in flow_stalls(run, t_fault, horizon_s, ser).values()), default=0.0), 9)


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
    ser = _series(run)  # once: every step below that reads the flows' samples takes it
    bins = goodput_bins(run, bin_ms / 1000, ser)
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
    srtt_med = srtt[len(srtt) // 2] / 1e9 if srtt else None
    # the window at any phase on the emulated fabric only: its hosts' samples come late on a loaded
    # machine (the bins' false dips); a simulated run samples on time, and its thousands of flows make
    # the curve cost seconds per run
    emulated, curve = run.get("engine", "netns") == "netns", None
    for k, f in enumerate(downs):
        tf = f["t_s"]
        pre_mean = pre_failure_mean(bins, bin_ms / 1000, tf)
        window = DIP_WINDOW_RTTS * srtt_med if srtt_med else RECOVERY_HORIZON_S
        horizon = min([tf + window] + [g["t_s"] for g in downs[k + 1:]])
        post_mean = post_failure_rate(run, bins, bin_ms / 1000, tf, window, ser)
        # the reference: what the fabric carried before the failure, or what it carries after it if
        # that is less (the failure took capacity: "back to 80%" of the old rate would then be met
        # only by a burst bin, never by the steady rate)
        ref = min(pre_mean, post_mean) if post_mean is not None else pre_mean
        rec = goodput_recovery(bins, bin_ms / 1000, tf, horizon, ref)
        rec_pre = goodput_recovery(bins, bin_ms / 1000, tf, horizon, pre_mean) if ref != pre_mean else rec
        stalls = flow_stalls(run, tf, ser=ser)
        affected = {fid: s for fid, s in stalls.items() if s["stall_s"] > 3 * sample_ms / 1000 and
                    (s["from_s"] or 0) <= tf + 1.0}
        max_stall = round(max((s["stall_s"] for s in stalls.values()), default=0.0), 9)
        at_fault = failure_stall(run, tf, horizon, ser)
        rec_s = rec["recovery_s"]
        pre_s = rec_pre["recovery_s"]
        sl: dict[str, Any] = {"recovery_s": None, "min_mb_s": None, "min_at_s": None}
        if emulated:
            curve = curve or acked_curve(run, ser)
            sl = goodput_recovery_sliding(run, bin_ms / 1000, tf, horizon, ref, curve)
        sl_s = sl["recovery_s"]
        recov.append({"fault": f["fault"], "t_s": tf, "pre_mb_s": round(pre_mean, 3),
                      "post_mb_s": None if post_mean is None else round(post_mean, 3), "ref_mb_s": round(ref, 3),
                      "min_mb_s_after": rec["min_mb_s"], "min_at_s": rec["min_at_s"],
                      "goodput_recovery_s": rec_s,
                      "goodput_recovery_rtts": None if rec_s is None or not srtt_med else round(rec_s / srtt_med, 1),
                      # the same window width at any phase, its crossing found between the samples (not
                      # held to the bins' grid, which adds 0 to one bin): goodput_recovery_sliding
                      "goodput_recovery_sliding_s": sl_s,
                      "goodput_recovery_sliding_rtts": None if sl_s is None or not srtt_med else round(sl_s / srtt_med, 2),
                      # that window's dip: its goodput and its start from the failure (None where not measured)
                      "min_mb_s_after_sliding": sl["min_mb_s"], "min_at_s_sliding": sl["min_at_s"],
                      "goodput_recovery_pre_s": pre_s,
                      "goodput_recovery_pre_rtts": None if pre_s is None or not srtt_med else round(pre_s / srtt_med, 1),
                      "max_flow_stall_s": max_stall,
                      "max_flow_stall_rtts": round(max_stall / srtt_med, 1) if srtt_med else None,
                      "failure_stall_s": at_fault,
                      "failure_stall_rtts": round(at_fault / srtt_med, 1) if srtt_med else None,
                      "stalled_until_end": sorted(fid for fid, s in stalls.items() if s["until_end"]),
                      "affected_flows": sorted(affected),
                      # how long after the failure its dip (and a failure stall's start) is looked for:
                      # DIP_WINDOW_RTTS median srtts, or RECOVERY_HORIZON_S without one (the RC baseline)
                      "dip_window_s": round(window, 9), "dip_window_rtts": DIP_WINDOW_RTTS if srtt_med else None})
    fct = sorted(x / 1000 for h in hosts for f in h["flows"].values()
                 for x in (f.get("fct_ns") or ([f["last_done_ns"]] if f["last_done_ns"] is not None
                                               and f["done"] >= f["count"] else [])))
    return {
        "engine": run.get("engine", "netns"),
        "fct_us": {"mean": round(sum(fct) / len(fct), 3) if fct else 0.0, "p50": _pct(fct, 0.5),
                   "p99": _pct(fct, 0.99), "max": fct[-1] if fct else 0.0, "flows": len(fct)},
        "step_s": run.get("step_s", []),
        "sim": run.get("sim", {}),
        "mode": run["mode"], "completed": run["completed"] and not failed and done_bytes == run["total_bytes"],
        "completion_s": None if completion is None else round(completion, 9),
        "elapsed_s": round(run["elapsed_s"], 9), "deadline_s": run["deadline_s"],
        "total_bytes": run["total_bytes"], "delivered_bytes": done_bytes, "failed_messages": failed,
        "verified_bytes": checked, "corrupt_messages": bad,
        "data_loss": bad > 0 or failed > 0,
        "goodput_mb_s": round(done_bytes / max(completion or run["elapsed_s"], 1e-9) / 1e6, 3),
        "latency_us": {"p50": _pct(lat, 0.5), "p99": _pct(lat, 0.99), "p999": _pct(lat, 0.999),
                       "max": lat[-1] if lat else 0.0, "messages": len(lat)},
        "retransmissions": dict(retx), "retransmissions_total": sum(retx.values()),
        "trims_received": ctr["trims_received"], "ecn_echoes": ctr["ecn_echoes"],
        "trim_resends_ahead": ctr["retx_trim_ahead"],
        "lost_resends_as_data": ctr["retx_lost_as_data"],
        "duplicates_received": ctr["duplicates_received"], "timeouts": ctr["timeouts"],
        "data_packets_sent": ctr["data_packets_sent"], "cnps": ctr["cnps_received"],
        "ev_retirements": sum(1 for e in evs if e[5] == "ASSUMED_BAD"),
        # False on a target that does not count them (bmv2): the two sums below are then 0 unseen, not 0 seen
        "outside_drops_reported": run.get("outside_drops_reported", True),
        # switches whose counts could not be read (stopped at the start or the end): not in the sums below
        "outside_drops_unread": run.get("outside_drops_unread", []),
        "kernel_rx_drops": sum((run.get("kernel_rx_drops") or {}).values()),
        "queue_tail_drops": sum((run.get("queue_tail_drops") or {}).values()),
        # frames past the pipeline and the queues that a port could not send (link down, tx ring full)
        "tx_drops": sum((run.get("tx_drops") or {}).values()),
        # frames a receive ring cut short (never forwarded; the metrics' rx_error outside drops)
        "rx_errors": sum((run.get("rx_errors") or {}).values()),
        # where: {"switch:port/priority": n} for the queues that tail-dropped during the run
        "queue_tail_drops_by_queue": {k: v for k, v in (run.get("queue_tail_drops_by_queue") or {}).items() if v},
        "ev_changes": dict(ev_changes), "ev_events": sorted(evs, key=lambda e: e[:7]),
        # retirements on a path that crossed a failed link vs on a healthy one (MRC's claim: none)
        "ev_split": ev_split(run),
        # each retirement an MRC QP decided, with the verdict's evidence and the responder's record of its PSN
        "ev_verdicts": _verdicts(hosts),
        "late_deliveries": _late(hosts),
        "srtt_ms_median": round(srtt[len(srtt) // 2] / 1e6, 6) if srtt else None,
        "bin_ms": bin_ms,
        "switch_drops": dict(sw_drops),
        "switch_trims": sw_cong[EVENT_TRIMMED], "switch_ecn_marks": sw_cong[EVENT_ECN_MARKED],
        "switch_early_drops": sw_cong[EVENT_EARLY_DROP],
        "switch_congestion_per_s": {s: dict(c) for s, c in sorted(cong_by_s.items())},
        "switch_congestion_series": [(round(t, 9), c) for t, c in congestion_series(run)],
        "goodput_bins": [(round(t, 9), round(g, 3)) for t, g in bins],
        "recovery": recov, "faults": run["faults"],
        # faults scheduled for a time the run did not reach (it completed first): listed, never silently absent
        "faults_not_reached": run.get("faults_not_reached", []),
        "errors": [e for h in hosts for e in h["errors"]],
    }


def faults_not_reached(faults: Any, log: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The scheduled faults (``FaultSpec``s) a run never applied nor tried to, because it ended first:
    [{"fault": label, "at_s": when it was due}], matched against the run's fault log by label."""
    tried = Counter(f["fault"] for f in log if not f.get("undo"))
    out = []
    for f in sorted(faults, key=lambda f: f.at):
        if tried[f.label()] > 0:
            tried[f.label()] -= 1
        else:
            out.append({"fault": f.label(), "at_s": f.at})
    return out


def _verdicts(hosts: Any) -> list[dict[str, Any]]:
    """The hosts' EV retirements (agent ``ev_verdicts``) in time order, each with ``responder``: what the
    receiving MRC responder logged of its PSN ([t_ns, "trim" | "dup", EV index], from its ``rx_log``)."""
    rx: dict[tuple[int, int, int], list] = {}
    for h in hosts:
        for t, fid, sq, _lq, kind, psn, evi in h.get("rx_log", ()):
            rx.setdefault((int(fid), int(sq), int(psn)), []).append([t, kind, evi])
    out = []
    for h in hosts:
        for v in h.get("ev_verdicts", ()):
            out.append({**v, "responder": rx.get((int(v["flow"]), int(v["qpn"]), int(v["psn"])), [])})
    return sorted(out, key=lambda v: v.get("retired_ns") or v.get("t_ns") or 0)


def _late(hosts: Any) -> list[dict[str, Any]]:
    """The packets that held a flow's cumulative ACK longest (agent ``late_deliveries`` that did), longest
    first, at most ``LATE_KEPT``."""
    held = [v for h in hosts for v in h.get("late_deliveries", ()) if v.get("held_cum_ack")]
    return sorted(held, key=lambda v: -v["delivery_ns"])[:LATE_KEPT]


def late_lines(m: dict[str, Any], limit: int = 5) -> list[str]:
    """One line per packet that held a flow's cumulative ACK longest (``analyse``'s ``late_deliveries``):
    when it left, how long its delivery took, and each resend with its cause and the EV of the copy it
    replaced."""
    lines = []
    for v in m.get("late_deliveries", ())[:limit]:
        resends = ", ".join(f"{cause} on EV {ev} at +{_ms(t)} ms" for t, cause, ev in v["resends"]) or "none"
        lines.append(f"  flow {v['flow']} ->{v['dst']} QP {v['qpn']:#x} PSN {v['psn']}: sent at "
                     f"{_ms(v['first_sent_ns'])} ms on EV {v['first_ev']}, delivered {_ms(v['delivery_ns'])} ms later "
                     f"({v['delivery_ns'] / v['srtt_ns']:.1f} srtts) on EV {v['last_ev']}, {v['xmits']} copies; "
                     f"resends: {resends}")
    return lines


def _ms(ns: int | None) -> str:
    return "-" if ns is None or ns < 0 else f"{ns / 1e6:.1f}"


def verdict_lines(m: dict[str, Any]) -> list[str]:
    """One line per EV retirement of ``analyse``'s result: the verdict's kind ("fifo": a later packet on
    the path was delivered and this one not, no congestion signal on the path within its RTT; "quiet": a
    suspect path showed no life in time), the PSN and its age, the path's delivery record, the limits it
    was judged by, and what the responder saw of the PSN (trimmed, arrived twice, nothing)."""
    lines = []
    for v in m.get("ev_verdicts", ()):
        sent = v.get("sent_ns", 0)
        trace = ", ".join(f"{k} on EV {e} at +{_ms(t - sent)} ms after its send" for t, k, e in v.get("responder", ())) \
            or "no trim or duplicate of it at the responder"
        at = v.get("retired_ns") or v["t_ns"]
        later = v["ev_rack_ts_ns"] - sent if v["ev_rack_ts_ns"] != -1 else None
        later_txt = ("its latest delivered packet sent at the same time as this one" if later == 0 else
                     "nothing delivered on it yet" if later is None else
                     f"its latest delivered packet sent {later / 1e6:.1f} ms after this one")
        cwnd = "-" if v.get("cwnd") is None else f"{int(v['cwnd'])} B"
        signal = _ms(v["since_ev_signal_ns"]) + " ms before" if v["since_ev_signal_ns"] < 1 << 60 else "never"
        line = (f"  {_ms(at)} ms {v['kind']:5} flow {v['flow']} ->{v['dst']} QP {v['qpn']:#x} EV {v['ev']} (port "
                f"{v['port']}): PSN {v['psn']} xmits {v['xmits']} age {_ms(v['age_ns'])} ms at the verdict "
                f"({_ms(v['t_ns'])} ms); EV last delivered {_ms(v['since_ev_delivery_ns'])} ms before, "
                f"{later_txt}, congestion signal {signal}; srtt "
                f"{_ms(v['srtt_ns'])} min {_ms(v['min_rtt_ns'])}, EV srtt {_ms(v['ev_srtt_ns'])} +- "
                f"{_ms(v['ev_rttvar_ns'])} last {_ms(v['ev_last_rtt_ns'])}; window {_ms(v['reorder_ns'])} / EV "
                f"{_ms(v['ev_reorder_ns'])}, late limit {_ms(v['late_limit_ns'])}, pto {_ms(v['pto_ns'])}, quiet "
                f"{_ms(v['quiet_ns'])}; in flight {v['in_flight_pkts']} pkts, cwnd {cwnd}")
        if v["kind"] == "quiet":
            probe = f"sent at {_ms(v.get('probe_sent_ns'))} ms" if v.get("probe_sent_ns") else "not sent"
            line += (f"; suspect at {_ms(v.get('suspect_ns'))} ms with {_ms(v.get('confirm_ns'))} ms to show life, "
                     f"probe {probe}{', unanswered' if v.get('probe_unanswered') else ''}, EV quiet "
                     f"{_ms(v.get('since_ev_delivery_at_retire_ns'))} ms at the retirement")
        lines.append(line + f"; responder: {trace}")
    return lines


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


def per_second(m: dict[str, Any], period_s: float = 1.0) -> list[tuple[int, float]]:
    """Goodput per whole period (a second unless given) from the bins: [(period index, MB/s)]."""
    acc: dict[int, list[float]] = {}
    for t, g in m["goodput_bins"]:
        acc.setdefault(int(t / period_s + 1e-9), []).append(g)
    return [(s, sum(v) / len(v)) for s, v in sorted(acc.items())]


def outside_drops_text(m: dict[str, Any]) -> str:
    """What a run's switches lost outside their pipelines (``analyse``'s result): kernel receive drops,
    traffic-manager tail drops, with the queues that tail-dropped, and transmit drops (frames a port could
    not send: its link down, its transmit ring full), and receive-ring errors when there are any (frames
    a receive ring cut short, never forwarded); or, on a target that does not count them (bmv2: no
    ``port_stats``), that they are not counted -- never a 0 nobody measured."""
    if not m.get("outside_drops_reported", True):
        return "not counted by this target (no port_stats)"
    by_q = m.get("queue_tail_drops_by_queue") or {}
    return (f"kernel receive drops {m.get('kernel_rx_drops', 0)}, traffic-manager tail drops "
            f"{m.get('queue_tail_drops', 0)}" + (" (" + ", ".join(f"{k} {v}" for k, v in sorted(by_q.items())) + ")"
                                                  if by_q else "") + f", transmit drops {m.get('tx_drops', 0)}"
            # receive-ring errors: named when there are any (controller.metrics' rx_error kind)
            + (f", receive ring errors {m['rx_errors']}" if m.get("rx_errors") else "")
            # a switch that did not answer (stopped) is in none of these sums: say so, never a silent 0
            + (f"; not read from {', '.join(m['outside_drops_unread'])}" if m.get("outside_drops_unread") else ""))


def timeline_lines(m: dict[str, Any]) -> list[str]:
    """Per-second goodput with the faults, EV changes and retransmissions of each second."""
    per = timeline_period(m["elapsed_s"])
    col = "second" if per == 1.0 else "  t us"
    lines = [f"timeline ({m['mode']}):  {col}  goodput MB/s  EV->BAD  EV->GOOD  sw trims  sw ECN  faults"]
    evs_by_s: dict[int, Counter] = {}
    for e in m["ev_events"]:
        evs_by_s.setdefault(int(e[0] / 1e9 / per + 1e-9), Counter())[e[5]] += 1
    faults_by_s: dict[int, list[str]] = {}
    for f in m["faults"]:
        faults_by_s.setdefault(int(f["t_s"] / per + 1e-9), []).append(
            f"{f['did']} @{dur(f['t_s'])}" if "did" in f else f"{f['fault']} NOT APPLIED @{dur(f['t_s'])}: {f.get('error')}")
    if per == 1.0:
        cong = {int(k): v for k, v in m.get("switch_congestion_per_s", {}).items()}
    else:  # short (simulated) runs: the sampled series, per timeline row
        cong = {}
        for t_end, counts in m.get("switch_congestion_series", []):
            cong.setdefault(max(0, int(t_end / per - 1e-9)), Counter()).update(counts)
    for s, g in per_second(m, per):
        c = evs_by_s.get(s, Counter())
        k = cong.get(s, {})
        label = f"{s:>6}" if per == 1.0 else f"{s * per * 1e6:6.0f}"
        lines.append(f"  {label}  {g:11.2f}  {c['ASSUMED_BAD']:7}  {c['GOOD']:8}  {k.get(EVENT_TRIMMED, 0):8}  "
                     f"{k.get(EVENT_ECN_MARKED, 0):6}  {'; '.join(faults_by_s.get(s, []))}")
    r = m["retransmissions"]
    lines.append(f"  retransmissions by cause: rack {r.get('rack', 0)}, timeout {r.get('timeout', 0)}"
                 + (f" ({m['lost_resends_as_data']} of those two as data: the QP's packets were being trimmed)"
                    if m.get("lost_resends_as_data") else "")
                 + f", trim {r.get('trim', 0)}" + (f" ({m['trim_resends_ahead']} of them ahead of the data queues: the packet "
                                              "holding the cumulative ACK, trimmed again)"
                                              if m.get("trim_resends_ahead") else "")
                 + f", nak (go-back-N) {r.get('nak', 0)}")
    lines.append("  EV state changes: " + (", ".join(f"{k} x{v}" for k, v in sorted(m["ev_changes"].items()))
                                           or "none"))
    sp = m.get("ev_split")
    if sp and sp["retired"]:
        grey = sp.get("retired_grey", 0)
        lines.append(f"  EVs made ASSUMED_BAD: {sp['retired_crossing']} on a path through a failed link, "
                     + (f"{grey} on a path through a lossy (grey) link, " if grey else "")
                     + f"{sp['retired_healthy']} on a healthy path"
                     + (f", {sp['unknown_path']} whose path the plan does not name" if sp["unknown_path"] else "")
                     + f"; still bad at the end: {sp['crossing_still_bad_at_end']} failed-link, "
                     + (f"{sp['grey_still_bad_at_end']} grey-link, " if grey else "")
                     + f"{sp['healthy_still_bad_at_end']} healthy")
        for x in sp.get("healthy_examples", ()):  # the ones MRC should not make: why each was made
            lines.append(f"    healthy path retired: {x['host']} at {x['t_us'] / 1e3:.3f} ms, QP {x.get('qpn', '?')} "
                         f"EV {x.get('ev', '?')} ({x['cause']}): {evidence_text(x.get('evidence')) or 'no evidence'}")
    lines.append(f"  switches: trimmed {m.get('switch_trims', 0)}, CE-marked {m.get('switch_ecn_marks', 0)}, "
                 f"dropped early {m.get('switch_early_drops', 0)}; drops by reason {m['switch_drops'] or 'none'}; "
                 f"frames lost outside the pipeline: {outside_drops_text(m)}")
    lines.append(f"  endpoints: trims received (trim NACKs sent) {m['trims_received']}, ECN echoes {m['ecn_echoes']}, "
                 f"CNPs {m.get('cnps', 0)}; data packets sent {m.get('data_packets_sent', 0)}, resent "
                 f"{sum(r.values())}")
    return lines


def summary_lines(m: dict[str, Any]) -> list[str]:
    """One paragraph per run: completion, data integrity, latency, recovery after each fault."""
    done = (f"completed in {dur(m['completion_s'])}" if m["completed"] else
            f"DID NOT COMPLETE within {dur(m['elapsed_s'])}")
    srtt = m["srtt_ms_median"]
    lines = [(f"{m['mode']}: {done}; delivered {m['delivered_bytes'] / 1e6:.1f} of {m['total_bytes'] / 1e6:.1f} MB, "
             f"{m['verified_bytes'] / 1e6:.1f} MB verified byte for byte, corrupt messages {m['corrupt_messages']}, "
             f"failed messages {m['failed_messages']}; goodput {m['goodput_mb_s']:.2f} MB/s; message latency "
             f"p50 {dur(m['latency_us']['p50'] / 1e6)} p99 {dur(m['latency_us']['p99'] / 1e6)}; "
             f"srtt {dur(srtt / 1000) if srtt else 'not measured'}")]
    f = m.get("fct_us") or {}
    if f.get("flows"):
        lines.append(f"  flow completion times ({f['flows']} flows x steps): mean {dur(f['mean'] / 1e6)}, "
                     f"p99 {dur(f['p99'] / 1e6)}, max {dur(f['max'] / 1e6)}")
    if len(m.get("step_s") or []) > 1:
        lines.append("  step times: " + ", ".join(dur(x) for x in m["step_s"]))
    if m.get("faults_not_reached"):  # a fault due after the run completed: nothing below measures it
        lines.append(f"  faults NOT REACHED (the run ended at {dur(m['elapsed_s'])}, before they were due): "
                     + ", ".join(f"{f['fault']} @{dur(f['at_s'])}" for f in m["faults_not_reached"]))
    if m.get("sim"):
        s = m["sim"]
        lines.append(f"  simulator: {s['hosts']} hosts, {s['paths_per_pair']} paths per pair, {s['events']} events "
                     f"in {s['cpu_s']:.1f} s CPU ({s['events_per_s']:.0f} events/s), wall {s['wall_s']:.1f} s")
    for r in m["recovery"]:
        rtts = r.get("goodput_recovery_rtts")
        if r["goodput_recovery_s"] is None:
            rec = "not within the run"
        elif r["goodput_recovery_s"] == 0:
            rec = "no bin fell below it"
        else:
            rec = dur(r["goodput_recovery_s"]) + (f" ({rtts:g} RTTs)" if rtts is not None else "")
        if m.get("engine", "netns") == "netns" and "goodput_recovery_sliding_s" in r:
            # beside the bins' figure, the same window at any phase (the demo judges on this one)
            sl, sl_rtts = r["goodput_recovery_sliding_s"], r.get("goodput_recovery_sliding_rtts")
            rec += f"; on a {dur(m['bin_ms'] / 1000)} window at any phase, held {dur(m['bin_ms'] / 1000)}: " + (
                "not within the run" if sl is None else "none fell below it" if sl == 0 else
                dur(sl) + (f" ({sl_rtts:g} RTTs)" if sl_rtts is not None else ""))
        # signed: the lowest bin can be the one holding the failure, begun before it (the demo printed "at +-3500.0 us")
        at = r.get("min_at_s")
        low = "" if at is None else f" at {'+' if at >= 0 else '-'}{dur(abs(at))}"
        st = r.get("max_flow_stall_rtts")
        post = r.get("post_mb_s")
        settled = "" if post is None else f", {post:.2f} once settled"
        if r.get("ref_mb_s", r["pre_mb_s"]) != r["pre_mb_s"]:
            p_s, p_rtts = r.get("goodput_recovery_pre_s"), r.get("goodput_recovery_pre_rtts")
            old = "never" if p_s is None else dur(p_s) + (f" = {p_rtts:g} RTTs" if p_rtts is not None else "")
            settled += f" (80% of the pre-failure rate: {old})"
        lines.append(f"  after {r['fault']} @{dur(r['t_s'])}: goodput {r['pre_mb_s']:.2f} -> min "
                     f"{r['min_mb_s_after']:.2f} MB/s{low} ({dur(m['bin_ms'] / 1000)} bins){settled}, back to "
                     f"{int(RECOVERED_FRACTION * 100)}% of {r.get('ref_mb_s', r['pre_mb_s']):.2f}: {rec}; longest flow stall "
                     f"{dur(r['max_flow_stall_s'])}" + (f" ({st:g} RTTs)" if st is not None else "") +
                     (f", of those begun within {_window_text(r)} of it {dur(r['failure_stall_s'])}"
                      if "failure_stall_s" in r else "") +
                     f"; flows stalled until the end: {r['stalled_until_end'] or 'none'}")
    return lines


def _window_text(r: dict[str, Any]) -> str:
    """The dip window of a recovery entry in words: "3 RTTs" when the run measured an RTT, else its length
    ("0.3 s, no RTT measured": the RC baseline keeps no srtt, and 3 RTTs would be a false label)."""
    if "dip_window_s" not in r or r.get("dip_window_rtts"):
        return f"{DIP_WINDOW_RTTS:g} RTTs"
    return f"{dur(r['dip_window_s'])} (no RTT measured)"


# ---- a failure's impact, from a run's own data (simulated runs: EV paths and dead-link drops) -------------
def down_intervals(run: dict[str, Any]) -> list[tuple[str, str, float, float | None]]:
    """Every time a link was down: (node, node, down at s, back at s or None), from the faults' "links"
    entries ``[node, node, up]``."""
    return _link_intervals(run, "links", lambda up: not up)


def _link_intervals(run: dict[str, Any], key: str, failing) -> list[tuple[str, str, float, float | None]]:
    """The intervals a link spent in a failed state, from the faults' ``key`` entries ``[node, node, v]``:
    one opens at the first entry of a link with ``failing(v)`` true, and closes at its next entry
    with it false."""
    open_: dict[frozenset, float] = {}
    out: list[tuple[str, str, float, float | None]] = []
    for f in sorted(run.get("faults", ()), key=lambda f: f["t_s"]):
        for a, b, v in f.get(key, ()):
            k = frozenset((a, b))
            if failing(v) and k not in open_:
                open_[k] = f["t_s"]
            elif not failing(v) and k in open_:
                out.append((a, b, open_.pop(k), f["t_s"]))
    for k, t in open_.items():
        a, b = sorted(k) if len(k) == 2 else (next(iter(k)),) * 2
        out.append((a, b, t, None))
    return sorted(out, key=lambda x: (x[2], x[0], x[1]))


def grey_intervals(run: dict[str, Any]) -> list[tuple[str, str, float, float | None]]:
    """Every time a link silently dropped packets (a grey failure, ``link_loss``): (node, node, from s,
    until s or None), from the faults' "grey" entries ``[node, node, loss]`` (simulated runs)."""
    return _link_intervals(run, "grey", lambda loss: loss > 0)


def path_crosses(path: list[str] | None, a: str, b: str) -> bool:
    """Whether a path (the nodes it crosses, in order) uses the link between ``a`` and ``b``."""
    return bool(path) and any({x, y} == {a, b} for x, y in pairwise(path))


def ev_split(run: dict[str, Any]) -> dict[str, Any]:
    """EVs made ASSUMED_BAD, split by whether their path crosses a link that had failed by then (a
    justified retirement), else one that had been made lossy by then (a grey failure: ``link_loss``,
    justified too; counted apart since the link never went down), or neither (a healthy path retired:
    MRC's claim is that this never happens), and EVs back to GOOD (those on a failed link after it
    came back).  Needs each EV event's path (the 8th field of both engines' events); events without
    one are counted as ``unknown_path``.  ``healthy_examples``: the first healthy-path retirements, each
    with its verdict's evidence (the 9th field, ``EvEvent.evidence``)."""
    downs = down_intervals(run)
    greys = grey_intervals(run)
    out: dict[str, Any] = {"retired": 0, "retired_crossing": 0, "retired_grey": 0, "retired_healthy": 0,
                           "unknown_path": 0, "healthy_examples": [], "back_good": 0,
                           "back_good_crossing_after_return": 0, "crossing_still_bad_at_end": 0,
                           "grey_still_bad_at_end": 0, "healthy_still_bad_at_end": 0}
    last: dict[tuple, tuple[str, str]] = {}
    for name, h in run["hosts"].items():
        for e in sorted(h["ev_events"], key=lambda e: e[0]):
            path = e[7] if len(e) > 7 else None
            t = e[0] / 1e9
            crossing = [d for d in downs if d[2] <= t and path_crosses(path, d[0], d[1])]
            grey = not crossing and any(d[2] <= t and path_crosses(path, d[0], d[1]) for d in greys)
            if e[5] == "ASSUMED_BAD":
                out["retired"] += 1
                if path is None:
                    out["unknown_path"] += 1
                elif crossing:
                    out["retired_crossing"] += 1
                elif grey:
                    out["retired_grey"] += 1
                else:
                    out["retired_healthy"] += 1
                    if len(out["healthy_examples"]) < 5:
                        out["healthy_examples"].append({"host": name, "t_us": round(t * 1e6, 3), "path": path,
                                                        "cause": e[6], "qpn": e[1], "ev": e[2],
                                                        "evidence": e[8] if len(e) > 8 else None})
            elif e[5] == "GOOD" and e[4] == "ASSUMED_BAD":
                out["back_good"] += 1
                if crossing and all(d[3] is not None and d[3] <= t for d in crossing):
                    out["back_good_crossing_after_return"] += 1
            if path is not None:
                last[(name, tuple(path), e[2])] = (e[5], "crossing" if crossing else "grey" if grey else "healthy")
    for state, where in last.values():
        if state == "ASSUMED_BAD":
            out[f"{where}_still_bad_at_end"] += 1
    return out


def affected_flows(run: dict[str, Any]) -> dict[int, tuple[int, float, float]]:
    """Flows with packets (data, or their ACKs and probes) offered to a link while it was down: flow id ->
    (packets of its host pair lost there, when the first and the last were) (the simulator's
    ``dead_link_drops``; empty for other runs)."""
    pairs: dict[tuple[str, str], tuple[int, float, float]] = {}
    for d in run.get("dead_link_drops", ()):
        if d["src"] and d["dst"]:
            n, t, t2 = pairs.get((d["src"], d["dst"]), (0, d["first_s"], d["last_s"]))
            pairs[(d["src"], d["dst"])] = (n + d["packets"], min(t, d["first_s"]), max(t2, d["last_s"]))
    out = {}
    for f in run["flows"]:
        hit = [x for x in (pairs.get((f["src"], f["dst"])), pairs.get((f["dst"], f["src"]))) if x]
        if hit:
            out[int(f["fid"])] = (sum(x[0] for x in hit), min(x[1] for x in hit), max(x[2] for x in hit))
    return out


def _done_at(s: list[tuple[float, int]], total: int) -> float | None:
    return next((t for t, v in s if v >= total), None) if total else None


def _rate_bins(s: list[tuple[float, int]], stop: float, bin_s: float) -> list[tuple[float, float, float]]:
    """(start, end, MB/s) of acknowledged bytes per bin up to ``stop`` (the last bin cut there)."""
    out = []
    k = 0
    while k * bin_s < stop:
        a, b = k * bin_s, min((k + 1) * bin_s, stop)
        out.append((a, b, (_at(s, b) - _at(s, a)) / (b - a) / 1e6 if b > a else 0.0))
        k += 1
    return out


def flow_recovery(run: dict[str, Any], fids: Any, t_fault: float, bin_s: float, pre_from_s: float,
                  horizon_s: float, first_loss: dict[int, float] | None = None,
                  reference: dict[str, Any] | None = None) -> dict[str, Any]:
    """Each flow's recovery after a failure at ``t_fault``, from its acknowledged-bytes rate per
    ``bin_s`` bin (the last bin cut at the flow's completion) against the rate it would have had.

    That rate, with ``reference`` (the same scenario and seed without the fault: the same run up to
    ``t_fault``): the same flow's rate there in the same bin, and once the flow is done there, its mean
    rate there from ``t_fault`` to its completion; bins where the reference moved nothing (its ACK clock
    not started yet, its own stalls) are no dip.  Without ``reference``: the flow's mean over the bins
    in [``pre_from_s``, ``t_fault``).  As :func:`goodput_recovery` does for the aggregate: the dip is
    the lowest share of that rate among the full bins that end after the failure and start before
    ``horizon_s``; recovery is the time from the failure to the end of the first later bin at
    ``RECOVERED_FRACTION`` of it.  Only a rate bin counts: a full bin before the one that holds the flow's
    completion.  That bin's bytes are every byte held behind the last hole, acknowledged at once, and
    a flow whose cumulative ACK stood still from the failure to its end "moves" its whole remainder
    there: until 2026-12-07 such a flow (and one with no bin back at all) was counted as recovered at
    its completion.  ``outcome`` per flow: ``no_dip`` (no full bin below the bar, or done within a bin
    of the failure: recovery 0), ``recovered``, ``done_unrecovered`` (completed, no rate bin back:
    ``recovery_s`` None, ``done_after_s`` its completion from the failure) or ``running_at_end`` (neither
    back nor done when the run ended).  ``not_recovered`` lists the last two, and the recovery
    percentiles are over the recovered and no-dip flows only; ``done_unrecovered_after_s_*`` gives
    the others' completion times, which are not recovery times.  The flows together
    (``aggregate_recovery_s``): per rate bin, the bytes they moved over the bytes they would have
    moved, each flow counted while in flight and without its completion bin (a catch-up, not a rate).
    A flow done before the failure, or without a reference rate, is left out (counted).  Also each
    flow's longest stall (:func:`flow_stalls`) and, given ``first_loss`` (flow id -> when its first
    packet was lost to the failure), its recovery counted from then (``recovery_from_loss_s``)."""
    # only the measured flows' series: the others' (hosts x samples values, 12.6 M for the 1,024-host RC
    # run) are not read, nor their stalls computed
    ser = _series(run, fids)
    rser = _series(reference, fids) if reference is not None else {}
    totals = _flow_totals(run)
    stalls = flow_stalls(run, t_fault, ser=ser)
    agg_num: dict[int, float] = {}  # per bin: bytes the measured flows moved...
    agg_den: dict[int, float] = {}  # ...and the bytes they would have moved (while each was in flight)
    per: dict[int, dict[str, Any]] = {}
    skipped = {"done_before": 0, "no_rate_before": 0}
    for fid in sorted(fids):
        s = ser.get(fid, [])
        total = totals.get(fid, 0)
        end = _done_at(s, total)
        if end is not None and end <= t_fault:
            skipped["done_before"] += 1
            continue
        bins = _rate_bins(s, end if end is not None else run["elapsed_s"], bin_s)
        if reference is not None:
            rs = rser.get(fid, [])
            r_end = _done_at(rs, total)
            mean = (total - _at(rs, t_fault)) / (r_end - t_fault) / 1e6 if r_end is not None and r_end > t_fault \
                else 0.0
            rb = _rate_bins(rs, r_end, bin_s) if r_end is not None else []
            # the reference's full bins; after its completion (or in its cut last bin) its mean rate
            ref = [rb[i][2] if i < len(rb) and rb[i][1] - rb[i][0] >= bin_s * 0.999 else mean
                   for i in range(len(bins))]
        else:
            pre = [g for a, b, g in bins if a >= pre_from_s and b <= t_fault]
            mean = sum(pre) / len(pre) if pre else 0.0
            ref = [mean] * len(bins)
        if not mean:
            skipped["no_rate_before"] += 1
            continue
        # rate bins: full, and before the bin that holds the completion (its bytes are the catch-up of all
        # held behind the last hole: no rate); a flow still running at the end has its last bin cut there
        done_bin = len(bins) - 1 if end is not None else None
        rate = [b - a >= bin_s * 0.999 and i != done_bin for i, (a, b, _) in enumerate(bins)]
        for i, (a, b, g) in enumerate(bins):
            if b > t_fault and rate[i]:
                agg_num[i] = agg_num.get(i, 0.0) + g * (b - a)
                agg_den[i] = agg_den.get(i, 0.0) + ref[i] * (b - a)
        # the dip: rate bins where the reference moved something
        idx = [i for i, (a, b, _) in enumerate(bins) if b > t_fault and a < horizon_s and rate[i] and ref[i] > 0]
        rec: float | None = None
        low_share = None
        outcome = "running_at_end" if end is None else "done_unrecovered"
        if idx:
            low = min(idx, key=lambda i: bins[i][2] / ref[i])
            low_share = round(bins[low][2] / ref[low], 3)
            if low_share >= RECOVERED_FRACTION:
                rec, outcome = 0.0, "no_dip"
            else:
                back = next((i for i in range(low + 1, len(bins))
                             if rate[i] and ref[i] > 0 and bins[i][2] >= RECOVERED_FRACTION * ref[i]), None)
                if back is not None:
                    rec, outcome = round(bins[back][1] - t_fault, 9), "recovered"
        elif end is not None:
            rec, outcome = 0.0, "no_dip"  # done within a bin of the failure: no rate bin after it
        fl = (first_loss or {}).get(fid)
        from_loss = None if rec is None or fl is None else round(max(0.0, rec - max(0.0, fl - t_fault)), 9)
        per[fid] = {"ref_mb_s": round(mean, 3), "min_share": low_share, "recovery_s": rec, "outcome": outcome,
                    "recovery_from_loss_s": from_loss, "stall_s": stalls.get(fid, {}).get("stall_s"), "done_s": end,
                    "done_after_s": None if end is None else round(end - t_fault, 9)}
    share = [(i * bin_s, agg_num[i] / agg_den[i]) for i in sorted(agg_den) if agg_den[i] > 0]
    agg = goodput_recovery(share, bin_s, t_fault, horizon_s, 1.0) if share else {"recovery_s": None, "min_mb_s": None}
    recs = sorted(r["recovery_s"] for r in per.values() if r["recovery_s"] is not None)
    from_loss = sorted(r["recovery_from_loss_s"] for r in per.values() if r["recovery_from_loss_s"] is not None)
    st = sorted(r["stall_s"] for r in per.values() if r["stall_s"] is not None)
    by = {k: sorted(f for f, r in per.items() if r["outcome"] == k)
          for k in ("no_dip", "recovered", "done_unrecovered", "running_at_end")}
    late = sorted(per[f]["done_after_s"] for f in by["done_unrecovered"])
    return {"flows": per, "measured": len(per), **skipped,
            **{f"{k}_count": len(v) for k, v in by.items()},
            "done_unrecovered": by["done_unrecovered"], "running_at_end": by["running_at_end"],
            "done_unrecovered_after_s_median": _pct(late, 0.5) if late else None,
            "done_unrecovered_after_s_max": late[-1] if late else None,
            "aggregate_recovery_s": agg["recovery_s"], "aggregate_min_share": agg["min_mb_s"],
            "aggregate_share": [(round(t, 9), round(x, 4)) for t, x in share],
            "not_recovered": sorted(f for f, r in per.items() if r["recovery_s"] is None),
            "recovery_s_median": _pct(recs, 0.5) if recs else None, "recovery_s_max": recs[-1] if recs else None,
            "recovery_from_loss_s_median": _pct(from_loss, 0.5) if from_loss else None,
            "recovery_from_loss_s_max": from_loss[-1] if from_loss else None,
            "stall_s_median": _pct(st, 0.5) if st else None, "stall_s_max": st[-1] if st else None}


def held_recovery(share: list[tuple[float, float]], bin_s: float, t_fault: float, back: float | None,
                  window_s: float) -> float | None:
    """When a rate (``share``: [(bin start, share of the reference)]) was back at ``RECOVERED_FRACTION``
    to stay: from ``t_fault``, the end of the first bin at the bar, from the lowest on (the one before
    ``back``, :func:`goodput_recovery`'s answer), whose next ``window_s`` has a mean at the bar too; None
    if none has (or ``back`` is None); 0 if ``back`` is (no dip).  A catch-up burst (the bytes held
    behind filled holes) can put one bin over the bar between two dips: "back" there is not back."""
    if back is None or back == 0.0:
        return back
    low_t = t_fault + back - bin_s
    # the next window's bins by bisection on their starts and a running sum (a scan of every bin per
    # candidate was quadratic: 2.2 s for 10,000 2 us bins that never held, a 20 ms run's worth)
    starts = [u for u, _ in share]
    cum = [0.0]
    for _, y in share:
        cum.append(cum[-1] + y)
    for t, x in share:
        if t >= low_t - 1e-12 and x >= RECOVERED_FRACTION:
            i = bisect_left(starts, t + bin_s - 1e-12)
            j = bisect_left(starts, t + bin_s + window_s - 1e-12)
            if j > i and (cum[j] - cum[i]) / (j - i) >= RECOVERED_FRACTION:
                return round(t + bin_s - t_fault, 9)
    return None


def failure_impact(run: dict[str, Any], t_fault: float, bin_s: float, pre_from_s: float = 0.0,
                   horizon_rtts: float = DIP_WINDOW_RTTS, reference: dict[str, Any] | None = None) -> dict[str, Any]:
    """A failure at ``t_fault`` seen from the run's own data: the flows with packets on the dead link
    and their recovery (:func:`flow_recovery`, dip looked for ``horizon_rtts`` base RTTs after the
    failure), in seconds and in the simulator's base RTTs, and the EV retirements split by path
    (:func:`ev_split`).  With ``reference`` (the run without the failure, same seed) also each affected
    flow's completion time against its own there (``extra_fct_s``)."""
    rtt = (run.get("sim") or {}).get("base_rtt_ns", 0) / 1e9 or None
    aff = affected_flows(run)
    rec = flow_recovery(run, aff, t_fault, bin_s, pre_from_s, t_fault + horizon_rtts * (rtt or 0.0) or run["elapsed_s"],
                        {f: t for f, (_, t, _) in aff.items()}, reference)
    # how long each affected flow kept putting packets (data, resends, ACKs, probes) on the dead link
    expo = sorted(t2 - t_fault for _, _, t2 in aff.values())
    extra: list[float] = []
    if reference is not None:
        fct = {int(fid): f["fct_ns"] for h in run["hosts"].values() for fid, f in h["flows"].items()}
        rfct = {int(fid): f["fct_ns"] for h in reference["hosts"].values() for fid, f in h["flows"].items()}
        extra = sorted((sum(fct[f]) - sum(rfct[f])) / 1e9 for f in aff if fct.get(f) and rfct.get(f))

    def rtts(x: float | None) -> float | None:
        return None if x is None or not rtt else round(x / rtt, 2)
    # "back to 80%" is one bin; the flows' mean share over the base RTT from there says whether the rate
    # stayed back or a catch-up burst (the bytes held behind filled holes) crossed the bar for a bin
    back = rec["aggregate_recovery_s"]
    held = [x for t, x in rec["aggregate_share"]
            if back is not None and rtt and t_fault + back <= t + 1e-12 and t < t_fault + back + rtt - 1e-12]
    held_back = held_recovery(rec["aggregate_share"], bin_s, t_fault, back, rtt) if rtt else None
    return {"base_rtt_s": rtt, "affected_flows": len(aff),
            "aggregate_held_share": round(sum(held) / len(held), 3) if held else None,
            "aggregate_held_recovery_s": held_back, "aggregate_held_recovery_rtts": rtts(held_back),
            "done_unrecovered_after_rtts_median": rtts(rec["done_unrecovered_after_s_median"]),
            "done_unrecovered_after_rtts_max": rtts(rec["done_unrecovered_after_s_max"]),
            "exposure_s_median": _pct(expo, 0.5) if expo else None, "exposure_s_max": expo[-1] if expo else None,
            "exposure_rtts_max": rtts(expo[-1]) if expo else None,
            "aggregate_recovery_rtts": rtts(rec["aggregate_recovery_s"]), "affected_packets_lost": sum(x[0] for x in aff.values()),
            "affected": sorted(aff), "recovery": rec,
            "recovery_rtts_median": rtts(rec["recovery_s_median"]), "recovery_rtts_max": rtts(rec["recovery_s_max"]),
            "recovery_from_loss_rtts_median": rtts(rec["recovery_from_loss_s_median"]),
            "recovery_from_loss_rtts_max": rtts(rec["recovery_from_loss_s_max"]),
            "stall_rtts_max": rtts(rec["stall_s_max"]), "evs": ev_split(run),
            "extra_fct_s_median": _pct(extra, 0.5) if extra else None, "extra_fct_s_max": extra[-1] if extra else None,
            "extra_fct_rtts_max": rtts(extra[-1]) if extra else None}
