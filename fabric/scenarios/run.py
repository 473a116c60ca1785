"""``run_scenario``: one fabric, every mode of the scenario run on it in turn, results as JSON-able data."""
from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import Any

from ..faults import FaultError, check_engine
from .report import analyse
from .runner import FabricEnv, NetnsFaults, ProgressFn, run_traffic
from .spec import Scenario, ScenarioError


def compare(mrc: dict[str, Any], rc: dict[str, Any]) -> dict[str, Any]:
    """MRC vs RC baseline figures measured in the same run (None where a side did not finish)."""
    out: dict[str, Any] = {}
    if mrc["completion_s"] and rc["completion_s"]:
        out["completion_ratio_rc_over_mrc"] = round(rc["completion_s"] / mrc["completion_s"], 3)
    elif mrc["completion_s"]:
        out["completion_ratio_rc_over_mrc_at_least"] = round(rc["elapsed_s"] / mrc["completion_s"], 3)
    out["goodput_ratio_mrc_over_rc"] = round(mrc["goodput_mb_s"] / rc["goodput_mb_s"], 3) if rc["goodput_mb_s"] else None
    out["p99_latency_ratio_rc_over_mrc"] = (round(rc["latency_us"]["p99"] / mrc["latency_us"]["p99"], 3)
                                            if mrc["latency_us"]["p99"] else None)
    stalls = []
    for a, b in zip(mrc["recovery"], rc["recovery"], strict=False):
        stalls.append({"fault": a["fault"], "mrc_max_stall_s": a["max_flow_stall_s"],
                       "rc_max_stall_s": b["max_flow_stall_s"], "rc_stalled_until_end": b["stalled_until_end"],
                       "mrc_goodput_recovery_s": a["goodput_recovery_s"],
                       "rc_goodput_recovery_s": b["goodput_recovery_s"]})
    out["faults"] = stalls
    return out


ENGINES = ("netns", "sim")


def run_scenario(sc: Scenario, *, prefix: str = "scn", grpc_base_port: int = 27400, workdir: Path,
                 target: str = "softswitch", progress: ProgressFn | None = None, env: FabricEnv | None = None,
                 engine: str = "netns") -> dict[str, Any]:
    """Run every mode of ``sc`` on an engine and analyse it; returns the results (also ``result.json``).

    ``netns``: the emulated fabric (namespaces, switch processes, a controller), brought up unless
    ``env`` is given and torn down after.  ``sim``: the simulated fabric (``fabric.sim``), a fresh one
    per mode.  Both return the same raw run shape, analysed by the same report code."""
    sc.check()
    t0 = time.monotonic()
    if engine not in ENGINES:
        raise ScenarioError(f"engine {engine!r} is not one of {', '.join(ENGINES)}")
    if engine == "sim":
        from ..sim import run_sim

        runs = {m: run_sim(sc, m, progress) for m in sc.modes}
        setup: dict[str, Any] = {}
        target = "sim"
    else:
        if sc.traffic.steps > 1:
            raise ScenarioError("scenario.traffic.steps: jobs of several steps need --engine sim")
        for i, f in enumerate(sc.faults):
            try:
                check_engine(f.spec, NetnsFaults.fault_primitives, "netns", f"scenario.faults[{i}]")
            except FaultError as e:
                raise ScenarioError(str(e)) from None
        own = env is None
        if env is None:
            env = FabricEnv(sc.fabric, prefix=prefix, grpc_base_port=grpc_base_port, target=target, workdir=workdir)
            env.__enter__()
        try:
            runs = {m: run_traffic(env, sc, m, progress) for m in sc.modes}
            setup = {"bringup_s": round(env.bringup_s, 2), "converge_s": round(env.converge_s, 2)}
        finally:
            if own:
                env.__exit__(None, None, None)
    metrics = {m: analyse(r, sc.measure.bin_ms, sc.measure.sample_ms) for m, r in runs.items()}
    out = {"scenario": dataclasses.asdict(sc), "engine": engine, "target": target, "setup": setup,
           "wall_s": round(time.monotonic() - t0, 2), "metrics": metrics, "runs": runs}
    if "mrc" in metrics and "rc" in metrics:
        out["comparison"] = compare(metrics["mrc"], metrics["rc"])
    Path(workdir).mkdir(parents=True, exist_ok=True)
    (Path(workdir) / "result.json").write_text(json.dumps(out, indent=1, default=str))
    return out
