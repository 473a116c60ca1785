"""Scenario results carry each EV change's evidence (the 9th field of ``ev_events``, ``EvEvent.evidence``)
and the report explains a healthy-path retirement with it (``ev_split``'s ``healthy_examples``,
``timeline_lines``): the simulated engine here, the same fields as the emulated one's agents."""
from __future__ import annotations

import copy

from test_sim_failure_impact import LINK, _sc

from mrc_fabric.scenarios.report import analyse, ev_split, path_crosses, timeline_lines
from mrc_fabric.sim import run_sim


def test_every_ev_event_of_a_link_failure_carries_its_evidence_and_a_healthy_retirement_is_explained():
    run = run_sim(_sc(LINK), "mrc")
    evs = [(n, e) for n, h in run["hosts"].items() for e in h["ev_events"]]
    bad = [e for _, e in evs if e[5] == "ASSUMED_BAD"]
    assert bad and all(len(e) == 9 and isinstance(e[8], dict) for _, e in evs)
    for e in bad:  # every one on the dead link (test_sim_failure_impact), by a RACK verdict
        assert path_crosses(e[7], "p1l1", "p1s1")
        assert e[6] == "rack" and e[8]["rule"] in ("fifo", "quiet")
        loss = e[8] if e[8]["rule"] == "fifo" else e[8]["suspicion"]
        assert loss["sent_ago_ns"] > 0 and loss["srtt_ns"] > 0 and isinstance(loss["psn"], int)
    back = [e for _, e in evs if e[5] == "GOOD" and e[4] == "ASSUMED_BAD"]
    assert back and all(e[6] == "probe" and e[8]["rule"] == "probe" for e in back)
    m = analyse(run)
    assert m["ev_split"]["retired_healthy"] == 0
    assert not any("healthy path retired" in x for x in timeline_lines(m))
    # the same run with the link failure left out of the record: its retirements count as healthy ones,
    # and the report says why each was made
    blind = copy.deepcopy(run)
    blind["faults"] = []
    sp = ev_split(blind)
    assert sp["retired_healthy"] == len(bad)
    ex = sp["healthy_examples"]
    assert ex and all(x["evidence"]["rule"] in ("fifo", "quiet") for x in ex)
    m2 = analyse(blind)
    lines = [x for x in timeline_lines(m2) if "healthy path retired" in x]
    assert len(lines) == len(ex)
    assert all(("fifo: PSN" in x or "quiet: suspect" in x) for x in lines)


def test_a_run_keeps_every_ev_event_past_a_profiles_unpolled_backlog(monkeypatch):
    """A profile keeps at most ``EV_EVENT_BACKLOG`` unpolled events and drops the older half past it
    (a24d3ed); the simulator polled only at the end, so a run with more changes per profile than that lost
    the older ones from ``ev_events`` -- the report's healthy-retirement count -- without a word (review
    h-rev5).  The backlog made small here stands for a long run of faults at the real 8,192."""
    import dataclasses

    import mrc.core.types as core_types

    sc = _sc(LINK)
    sc = dataclasses.replace(sc, sim=dataclasses.replace(sc.sim, evs_per_path=8))  # 8 EVs per path: more changes

    def events(run: dict) -> list:
        return sorted((n, tuple(e[:7])) for n, h in run["hosts"].items() for e in h["ev_events"])

    full = events(run_sim(sc, "mrc"))
    per_host = max(sum(1 for n, _ in full if n == h) for h, _ in full)
    assert per_host > 4
    monkeypatch.setattr(core_types, "EV_EVENT_BACKLOG", 4)
    assert events(run_sim(sc, "mrc")) == full
