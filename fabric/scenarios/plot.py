"""Goodput-over-time plot (PNG, matplotlib Agg) of every mode of a run, failure instants marked."""
from __future__ import annotations

from pathlib import Path
from typing import Any


def goodput_png(metrics: dict[str, dict[str, Any]], path: Path, title: str) -> Path:
    """Write the plot; returns its path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4.5), dpi=110)
    styles = {"mrc": ("tab:blue", "MRC (sprayed over every path)"), "rc": ("tab:red", "RC baseline (one path per QP)")}
    marked: set[tuple[float, str]] = set()
    for mode, m in metrics.items():
        color, label = styles.get(mode, ("tab:gray", mode))
        ts = [t for t, _ in m["goodput_bins"]]
        gs = [g for _, g in m["goodput_bins"]]
        ax.step(ts, gs, where="post", color=color, label=label)
        if m["completion_s"]:
            ax.axvline(m["completion_s"], color=color, ls=":", lw=1)
        for f in m["faults"]:
            key = (round(f["t_s"], 1), f.get("did", f["fault"]))
            if key in marked:
                continue
            marked.add(key)
            ax.axvline(f["t_s"], color="black", ls="--", lw=0.8)
            ax.text(f["t_s"], ax.get_ylim()[1] * 0.97, " " + key[1], rotation=90, va="top", fontsize=7)
    ax.set_xlabel("time since traffic start (s)")
    ax.set_ylabel("goodput (MB/s, acknowledged payload)")
    ax.set_title(title, fontsize=10)
    ax.legend(loc="upper right", fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path
