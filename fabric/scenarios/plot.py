"""Goodput-over-time plot (PNG, matplotlib Agg) of every mode of a run, failure instants marked.

Top: the whole run, goodput averaged over ~100 ms so the modes can be told apart.  Below, one panel
per failure: the binned goodput from 0.2 s before to 0.6 s after it, in ms relative to the failure,
with the pre-failure 80% bar and the instant each mode's goodput was back above it.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

STYLES = {"mrc": ("tab:blue", "MRC (sprayed over every path)"), "rc": ("tab:red", "RC baseline (one path per QP)")}


def _smooth(bins: list[tuple[float, float]], width_s: float) -> tuple[list[float], list[float]]:
    """Moving average over ``width_s`` (a whole number of bins), as a step series."""
    if len(bins) < 2:
        return [t for t, _ in bins], [g for _, g in bins]
    step = bins[1][0] - bins[0][0]
    k = max(1, round(width_s / step)) if step > 0 else 1
    ts, gs = [], []
    for i in range(0, len(bins), k):
        chunk = bins[i:i + k]
        ts.append(chunk[0][0])
        gs.append(sum(g for _, g in chunk) / len(chunk))
    return ts, gs


def goodput_png(metrics: dict[str, dict[str, Any]], path: Path, title: str) -> Path:
    """Write the plot; returns its path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    span = max((m["elapsed_s"] for m in metrics.values()), default=1.0)
    # time axis: seconds for the emulation; us for a simulated datacenter run (tens of us to ms)
    short = span < 0.1
    k, unit, zk, zunit = (1e6, "us", 1e6, "us") if short else (1.0, "s", 1000.0, "ms")
    smooth = span / 60 if short else 0.1
    before, after, near = (span * 0.1, span * 0.3, span * 0.01) if short else (0.2, 0.6, 0.05)
    downs: list[dict[str, Any]] = []
    for m in metrics.values():
        for f in m["faults"]:
            if f.get("down") and all(abs(f["t_s"] - d["t_s"]) > near for d in downs):
                downs.append(f)
    downs.sort(key=lambda f: f["t_s"])
    n = len(downs)
    fig = plt.figure(figsize=(9, 4.5 + (2.6 if n else 0)), dpi=110)
    grid = fig.add_gridspec(2 if n else 1, max(n, 1), height_ratios=[1.6, 1] if n else [1])
    ax = fig.add_subplot(grid[0, :])
    marked: set[tuple[float, str]] = set()
    for mode, m in metrics.items():
        color, label = STYLES.get(mode, ("tab:gray", mode))
        ts, gs = _smooth(m["goodput_bins"], smooth)
        ax.step([t * k for t in ts], gs, where="post", color=color, label=label)
        if m["completion_s"]:
            ax.axvline(m["completion_s"] * k, color=color, ls=":", lw=1)
        for f in m["faults"]:
            key = (round(f["t_s"] / near), f.get("did", f["fault"]))
            if key in marked:
                continue
            marked.add(key)
            ax.axvline(f["t_s"] * k, color="black", ls="--", lw=0.8)
            ax.text(f["t_s"] * k, ax.get_ylim()[1] * 0.97, " " + key[1], rotation=90, va="top", fontsize=7)
    ax.set_xlabel(f"time since traffic start ({unit})")
    ax.set_ylabel(f"goodput (MB/s, {smooth * zk:.3g} {zunit} mean)")
    ax.set_title(title, fontsize=10)
    ax.legend(loc="upper right", fontsize=8)
    ax.grid(alpha=0.3)
    for j, f in enumerate(downs):
        z = fig.add_subplot(grid[1, j])
        tf = f["t_s"]
        for mode, m in metrics.items():
            color, _ = STYLES.get(mode, ("tab:gray", mode))
            pts = [((t - tf) * zk, g) for t, g in m["goodput_bins"] if tf - before <= t <= tf + after]
            if not pts:
                continue
            z.step([p[0] for p in pts], [p[1] for p in pts], where="post", color=color, lw=1)
            rec = next((r for r in m["recovery"] if abs(r["t_s"] - tf) <= near), None)
            if rec is None or mode != "mrc":
                continue
            z.axhline(0.8 * rec.get("ref_mb_s", rec["pre_mb_s"]), color=color, ls=":", lw=0.8)
            if rec["goodput_recovery_s"] is not None:
                at = rec["goodput_recovery_s"] * zk
                rtts = rec.get("goodput_recovery_rtts")
                z.axvline(at, color=color, ls="-.", lw=0.8)
                z.text(at, 0.5, f" MRC back to 80%: +{at:.0f} {zunit}" + (f"\n ({rtts:g} RTTs)" if rtts is not None else ""),
                       fontsize=7, color=color, va="bottom")
        z.axvline(0, color="black", ls="--", lw=0.8)
        z.set_title(f.get("did", f["fault"]), fontsize=8)
        z.set_xlabel(f"{zunit} after the failure", fontsize=8)
        z.tick_params(labelsize=7)
        z.grid(alpha=0.3)
        if j == 0:
            z.set_ylabel(f"MB/s ({metrics[next(iter(metrics))]['bin_ms'] * zk / 1000:g} {zunit} bins)", fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path
