"""bench/fabric_recovery.py keeps every run where a failing one can be traced afterwards: before, each run
overwrote the agents' logs and nothing kept the result, so a run that retired healthy EVs (h-demo12's
dev-rec1 run 1) could not be explained.  Real files and the real "controller" logger; no fabric."""
from __future__ import annotations

import json
import logging

from test_bench_verdicts import _load


def test_each_run_keeps_its_result_and_its_own_agent_logs(tmp_path):
    rec = _load("fabric_recovery")
    work = tmp_path / "fabric"
    work.mkdir()
    kept = {}
    for i in (1, 2):  # the fabric writes the agents' logs to one place; each run overwrites them
        for h in ("h1", "h2"):
            (work / f"agent-mrc-{h}.log").write_text(f"run {i} {h} verdict quiet EV 0\n")
        (work / "agent-rc-h1.log").write_text("not this mode's\n")
        dest = rec.run_dir(tmp_path, i)
        kept[i] = rec.keep_run(dest, work, "mrc", {"run": i, "metrics": {"ev_verdicts": [{"ev": i}]},
                                                   "raw": {"hosts": {"h1": {"samples": [[0, 1]]}}}})
    assert kept[1] == kept[2] == ["result.json", "agent-mrc-h1.log", "agent-mrc-h2.log"]
    for i in (1, 2):
        d = tmp_path / f"run-{i}"
        assert json.loads((d / "result.json").read_text())["metrics"]["ev_verdicts"] == [{"ev": i}]
        assert (d / "agent-mrc-h2.log").read_text() == f"run {i} h2 verdict quiet EV 0\n"
    # two settings per run (--compare-resend-priority) do not share a directory
    assert rec.run_dir(tmp_path, 3, "resends as data") == tmp_path / "run-3-resends-as-data"
    assert rec.run_dir(tmp_path, 3, "resend queue") != rec.run_dir(tmp_path, 3, "resends as data")


def test_the_controllers_log_of_a_run_is_kept_at_info_and_only_while_the_run_lasts(tmp_path):
    rec = _load("fabric_recovery")
    log = logging.getLogger("controller")
    level, handlers = log.level, list(log.handlers)
    log.info("before the run")
    with rec.controller_log(tmp_path / "controller.log"):
        log.info("connected")
        log.warning("stream lost; reconnecting")
    log.info("after the run")
    text = (tmp_path / "controller.log").read_text()
    assert "connected" in text and "stream lost; reconnecting" in text
    assert "before the run" not in text and "after the run" not in text
    assert (log.level, log.handlers) == (level, handlers)  # nothing left behind


def test_the_default_out_is_a_fresh_directory_under_tmp():
    rec = _load("fabric_recovery")
    out = rec.default_out()
    assert out.parent.as_posix() == "/tmp/fabric-recovery" and out.name[:8].isdigit()
