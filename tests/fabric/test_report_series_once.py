"""The analysis of a run reads the hosts' acknowledged-bytes samples once (report._series).

A simulated fabric's run holds hosts x sample instants values: 12.6 M for the 1,024-host RC run of
bench/fabric_sim.py scale-failure (1 us samples over 12 ms).  Until 2026-12-07 every step of
``analyse`` that looked at the flows (the goodput bins, and per failure the first completion, the
stalls and the failure stall) and ``failure_impact`` (the recovery, then the stalls again) rebuilt
the per-flow series from those samples: 8 builds for the two runs of one mode (90 s of CPU for a
synthetic run of that size, 29 s now: bench/README.md "Stop 60").  These tests count the reads of
each sample row, so the number of builds is measured, not timed."""
from __future__ import annotations

import pytest

from mrc_fabric.scenarios.report import _series, analyse, failure_impact

SIZE = 64_000  # bytes per flow
STEP_NS = 1_000  # one sample a us


class Row(list):
    """A sample row that counts how often it is read (iterated or indexed)."""

    reads = 0

    def __iter__(self):
        Row.reads += 1
        return super().__iter__()

    def __getitem__(self, k):
        Row.reads += 1
        return super().__getitem__(k)


def _run(hosts: int, samples: int, downs: int, row: type = list, flows_per_host: int = 1) -> dict:
    """A simulated run's raw result: ``hosts`` senders with ``flows_per_host`` flows each, their
    acknowledged bytes sampled every us (each flow at its own steady rate, done at its own time), and
    ``downs`` link failures (each back 5 us later) in the first half."""
    names = [f"h{i + 1}" for i in range(hosts)]
    out: dict = {}
    flows = []
    fid = 0
    for i, name in enumerate(names):
        order, done_at = [], []
        fl: dict = {}
        for _ in range(flows_per_host):
            k_done = samples // 2 + (fid * 7919) % (samples // 2)  # done between half-way and the end
            order.append(fid)
            done_at.append(k_done)
            dst = names[(i + 1) % hosts]
            flows.append({"fid": fid, "src": name, "dst": dst})
            fl[str(fid)] = {"dst": dst, "size": SIZE, "count": 1, "posted": 1, "done": 1, "failed": 0,
                            "lat_us": [k_done * STEP_NS / 1000], "last_done_ns": k_done * STEP_NS,
                            "fct_ns": [k_done * STEP_NS]}
            fid += 1
        rows = [row([k * STEP_NS] + [min(SIZE, SIZE * k // d) for d in done_at]) for k in range(samples)]
        out[name] = {"host": name, "mode": "mrc", "errors": [], "flows": fl, "flow_order": order,
                     "samples": rows, "ev_events": [], "link_events": [], "retx": {"rack": 1},
                     "counters": {"timeouts": 0}, "srtt_ns": [12_000], "verify": {}, "driver": {}}
    faults = []
    for j in range(downs):
        t = (j + 1) * samples * STEP_NS / 1e9 / (2 * downs + 2)
        faults.append({"t_s": t, "fault": f"flap p1l{j + 1}-p1s1", "undo": False, "down": True,
                       "links": [[f"p1l{j + 1}", "p1s1", False]]})
        faults.append({"t_s": t + 5e-6, "fault": f"flap p1l{j + 1}-p1s1", "undo": True, "down": False,
                       "links": [[f"p1l{j + 1}", "p1s1", True]]})
    dead = [{"link": ["p1l1", "p1s1"], "src": names[0], "dst": names[1 % hosts], "packets": 3,
             "first_s": faults[0]["t_s"], "last_s": faults[0]["t_s"] + 2e-6}] if downs else []
    return {"mode": "mrc", "engine": "sim", "completed": True, "elapsed_s": samples * STEP_NS / 1e9,
            "deadline_s": 1.0, "total_bytes": len(flows) * SIZE, "flows": flows, "hosts": out, "faults": faults,
            "switch_counters": {}, "congestion_samples": [], "dead_link_drops": dead,
            "sim": {"base_rtt_ns": 10_000}}


def _reference_series(run: dict) -> dict:
    """The series as the report built it before (a value at a time), to compare with."""
    out: dict = {}
    for res in run["hosts"].values():
        for s in res["samples"]:
            for fid, v in zip(res["flow_order"], s[1:], strict=True):
                out.setdefault(int(fid), []).append((s[0] / 1e9, v))
    return out


def test_the_series_is_the_one_built_a_value_at_a_time():
    run = _run(5, 300, 1, flows_per_host=3)
    run["hosts"]["h2"]["samples"] = []  # a host that sent nothing: no series for its flows
    got = _series(run)
    assert got == _reference_series(run)
    assert list(got) == list(_reference_series(run))  # the flows in the same order
    assert 3 not in got and len(got) == 12


def test_a_sample_without_a_value_per_flow_is_refused():
    run = _run(3, 50, 0, flows_per_host=2)
    run["hosts"]["h3"]["samples"][7].pop()
    with pytest.raises(ValueError, match="h3: a sample does not hold one value per flow"):
        _series(run)


@pytest.mark.parametrize("downs", [1, 3])
def test_analyse_reads_each_sample_once_whatever_the_faults(downs):
    hosts, samples = 16, 400
    run = _run(hosts, samples, downs, row=Row)
    Row.reads = 0
    m = analyse(run, bin_ms=0.002, sample_ms=0.001)
    # before: the series built 1 + 3 x downs times, 2 reads of a row each (20 reads a row with 3 faults)
    assert Row.reads == hosts * samples
    assert len(m["recovery"]) == downs and m["goodput_bins"]
    assert m == analyse(_run(hosts, samples, downs), bin_ms=0.002, sample_ms=0.001)  # as with plain lists


def test_failure_impact_reads_each_run_once():
    hosts, samples = 16, 400
    run, ref = _run(hosts, samples, 1, row=Row), _run(hosts, samples, 0, row=Row)
    Row.reads = 0
    imp = failure_impact(run, run["faults"][0]["t_s"], 2e-6, reference=ref)
    # only the affected flow's sender (h1) is read, once in each run: until 2026-12-07 stop 60 the run's
    # series was built twice (the recovery, then the stalls) and the reference's once, every host's;
    # then once each, every host's (2 x hosts x samples reads); now only the measured flows' hosts
    assert Row.reads == 2 * samples
    assert imp["affected_flows"] == 1 and imp["recovery"]["measured"] == 1
    assert imp == failure_impact(_run(hosts, samples, 1), run["faults"][0]["t_s"], 2e-6,
                                 reference=_run(hosts, samples, 0))


def test_series_of_some_flows_is_theirs_in_the_whole_series():
    run = _run(6, 120, 1, flows_per_host=2)
    whole = _series(run)
    some = _series(run, {0, 5, 11})
    assert some == {f: whole[f] for f in (0, 5, 11)}
    assert _series(run, ()) == {}


def test_failure_impact_with_many_affected_flows_as_with_the_whole_series(monkeypatch):
    """The recovery measured on the affected flows' series alone equals the one measured on every flow's."""
    from mrc_fabric.scenarios import report
    run, ref = _run(32, 300, 1, flows_per_host=2), _run(32, 300, 0, flows_per_host=2)
    t = run["faults"][0]["t_s"]
    run["dead_link_drops"] = [{"link": ["p1l1", "p1s1"], "src": f["src"], "dst": f["dst"], "packets": 2,
                               "first_s": t, "last_s": t + 1e-6} for f in run["flows"][::5]]
    imp = failure_impact(run, t, 2e-6, reference=ref)
    assert imp["affected_flows"] == imp["recovery"]["measured"] == 26 < len(run["flows"])
    whole = report._series
    monkeypatch.setattr(report, "_series", lambda r, fids=None: whole(r))  # every flow's, as before
    assert failure_impact(run, t, 2e-6, reference=ref) == imp
