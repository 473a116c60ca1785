"""``run_scenario``: one fabric, every mode of the scenario run on it in turn, results as JSON-able data."""
from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path
from typing import Any, Protocol, Self

from controller import parse_topology
from mrc.yamlio import place_error

from ..faults import FaultError, check_engine, check_names
from ..targets import DEFAULT_TARGET
from .report import analyse, faults_not_reached
from .runner import FabricEnv, NetnsFaults, ProgressFn, flows_for, run_traffic, topology_data
from .spec import Scenario, ScenarioError, load_scenario


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
                       "rc_goodput_recovery_s": b["goodput_recovery_s"],
                       # the same window at any phase (None where not measured: a simulated run)
                       "mrc_goodput_recovery_sliding_s": a.get("goodput_recovery_sliding_s"),
                       "rc_goodput_recovery_sliding_s": b.get("goodput_recovery_sliding_s")})
    out["faults"] = stalls
    return out


class Engine(Protocol):
    """Where a scenario runs.  ``check`` refuses what the engine cannot do before anything starts;
    ``run`` returns one mode's raw run (the shape ``report.analyse`` reads); ``setup`` is what the
    engine reports about itself.  Used as a context manager around all modes of a scenario."""

    name: str
    fault_primitives: frozenset[str]

    def check(self, sc: Scenario) -> None: ...
    def __enter__(self) -> Self: ...
    def __exit__(self, *exc: object) -> None: ...
    def run(self, sc: Scenario, mode: str, progress: ProgressFn | None) -> dict[str, Any]: ...
    def setup(self) -> dict[str, Any]: ...


def _check_faults(engine: Engine, sc: Scenario) -> None:
    topo = parse_topology(topology_data(sc.fabric))
    # who writes to whom (traffic.hosts, incast_dst, shift): on the emulated fabric these were refused by
    # run_traffic, after the fabric had been brought up and converged
    flows_for(sc.traffic, [h.name for h in topo.host_list()])
    for i, f in enumerate(sc.faults):
        try:
            check_engine(f.spec, engine.fault_primitives, engine.name, f"scenario.faults[{i}]")
            check_names(f.spec, f, topo, f"scenario.faults[{i}]")
        except FaultError as e:
            raise ScenarioError(str(e)) from None


def _mem_total() -> int:
    """This machine's physical memory in bytes (0 when the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 0


def _check_buffers(sc: Scenario, mem_total: int | None = None) -> None:
    """Every host's agent on the emulated fabric holds each incoming flow's size x count bytes in memory
    (the receive buffer it verifies), and every agent runs on this machine: more than the machine has
    (`size: 1G, count: 100`) was a MemoryError in the agents once the fabric was up and converged."""
    topo = parse_topology(topology_data(sc.fabric))
    flows = flows_for(sc.traffic, [h.name for h in topo.host_list()])
    need = len(flows) * sc.traffic.size * sc.traffic.count
    have = _mem_total() if mem_total is None else mem_total
    if have and need > have:
        def size(n: int) -> str:
            return f"{n / (1 << 30):.1f} GiB" if n >= 1 << 30 else f"{n / (1 << 20):.1f} MiB"

        raise ScenarioError(f"scenario.traffic: {len(flows)} flow(s) x size {sc.traffic.size} x count "
                            f"{sc.traffic.count} is {size(need)} of receive buffers, held by the hosts' agents on "
                            f"this machine, which has {size(have)}; make size or count smaller (the simulator, "
                            "--engine sim, holds no buffers)")

class NetnsEngine:
    """The emulated fabric: namespaces, veths, switch processes, a controller (``FabricEnv``)."""

    name = "netns"
    fault_primitives = NetnsFaults.fault_primitives

    def __init__(self, sc: Scenario, *, prefix: str, grpc_base_port: int, workdir: Path, target: str,
                 env: FabricEnv | None = None) -> None:
        self.own = env is None
        # the fabric's environment is made on entry, after check: making it writes the workdir (a refused
        # scenario left an output directory behind)
        self._make_env = lambda: FabricEnv(sc.fabric, prefix=prefix, grpc_base_port=grpc_base_port, target=target,
                                           workdir=workdir)
        self.env = env
        self.target = target

    def check(self, sc: Scenario) -> None:
        if sc.traffic.steps > 1:
            raise ScenarioError("scenario.traffic.steps: jobs of several steps need --engine sim")
        _check_faults(self, sc)
        _check_buffers(sc)

    def __enter__(self) -> Self:
        if self.own:
            self.env = self._make_env()
            self.env.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.own:
            self.env.__exit__(None, None, None)

    def run(self, sc: Scenario, mode: str, progress: ProgressFn | None) -> dict[str, Any]:
        return run_traffic(self.env, sc, mode, progress)

    def setup(self) -> dict[str, Any]:
        return {"bringup_s": round(self.env.bringup_s, 2), "converge_s": round(self.env.converge_s, 2),
                "host_delay_us": self.env.host_delay_us}


class SimEngine:
    """The simulated fabric (``mrc_fabric.sim``): a fresh simulated fabric per mode."""

    name = "sim"

    def __init__(self, sc: Scenario, **_: Any) -> None:
        from ..sim import SimFaults

        self.fault_primitives = SimFaults.fault_primitives
        self.target = "sim"

    def check(self, sc: Scenario) -> None:
        _check_faults(self, sc)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def run(self, sc: Scenario, mode: str, progress: ProgressFn | None) -> dict[str, Any]:
        from ..sim import run_sim

        return run_sim(sc, mode, progress)

    def setup(self) -> dict[str, Any]:
        return {}


ENGINES: dict[str, type] = {"netns": NetnsEngine, "sim": SimEngine}


def _as_in_file(sc: Scenario) -> bool:
    """Whether ``sc`` is still what its file says (read again; on an error only).  A scenario changed
    after it was loaded (``dataclasses.replace``, as bench/fabric_sim.py does) keeps its ``source``, and
    its errors were placed in the file: ``count: 0`` set in code came out as ``FILE:4:51:
    traffic.count: must be >= 1, got 0`` at a line that says ``count: 4``."""
    try:
        return load_scenario(sc.source) == sc
    except (ScenarioError, OSError):
        return False


def run_scenario(sc: Scenario, *, prefix: str = "scn", grpc_base_port: int = 27400, workdir: Path,
                 target: str = DEFAULT_TARGET, progress: ProgressFn | None = None, env: FabricEnv | None = None,
                 engine: str = "netns") -> dict[str, Any]:
    """Run every mode of ``sc`` on an engine and analyse it; returns the results (also ``result.json``).

    ``netns``: the emulated fabric, brought up unless ``env`` is given and torn down after.  ``sim``:
    the simulated fabric.  Both return the same raw run shape, analysed by the same report code."""
    t0 = time.monotonic()
    if engine not in ENGINES:
        raise ScenarioError(f"engine {engine!r} is not one of {', '.join(ENGINES)}")
    eng = ENGINES[engine](sc, prefix=prefix, grpc_base_port=grpc_base_port, workdir=workdir, target=target, env=env)
    try:
        sc.check()
        eng.check(sc)
    except ScenarioError as e:
        if not sc.source or not _as_in_file(sc):
            raise
        raise ScenarioError(place_error(sc.source, str(e), "scenario")) from None
    with eng:
        runs = {m: eng.run(sc, m, progress) for m in sc.modes}
        setup = eng.setup()
    for r in runs.values():  # every engine: a fault due after the run's end is named in the report
        r.setdefault("faults_not_reached", faults_not_reached(sc.faults, r["faults"]))
    target = eng.target
    metrics = {m: analyse(r, sc.measure.bin_ms, sc.measure.sample_ms) for m, r in runs.items()}
    out = {"scenario": dataclasses.asdict(sc), "engine": engine, "target": target, "setup": setup,
           "wall_s": round(time.monotonic() - t0, 2), "metrics": metrics, "runs": runs}
    if "mrc" in metrics and "rc" in metrics:
        out["comparison"] = compare(metrics["mrc"], metrics["rc"])
    Path(workdir).mkdir(parents=True, exist_ok=True)
    (Path(workdir) / "result.json").write_text(json.dumps(out, indent=1, default=str))
    return out
