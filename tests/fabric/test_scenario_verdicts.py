"""An EV retirement reaches the scenario report with the evidence of its verdict (pure logic).

A simulated MRC transfer whose EV 0 path is dead retires that EV (a "quiet" verdict: the suspect path
showed no life); the agent's ``ev_verdicts`` turns the requester's record into run-relative times with
the flow and QPs, and ``analyse`` / ``verdict_lines`` put the responder's record of the PSN beside it.
"""

from __future__ import annotations

import random

from mrc.core import EvState, QpAttr
from mrc.sim import PathSpec, make_pair
from mrc_fabric.scenarios.agent import OutFlow, ev_verdicts
from mrc_fabric.scenarios.report import _verdicts, verdict_lines


def _retired_pair(late_srtts: int = 0):
    paths = [PathSpec() for _ in range(4)]
    paths[0].down = [(0, None)]
    p = make_pair(paths, attr=QpAttr(mode="mrc", cc="none"), buf_len=1 << 20)
    if late_srtts:
        p.qa.requester.LATE_SRTTS = late_srtts
    p.a.post_write(p.qa, 1, random.Random(3).randbytes(256 * 1024), p.mr.base_va, p.mr.rkey, None)
    end = 5_000_000
    while p.qa.evset.prof.states[0] is not EvState.ASSUMED_BAD:
        assert p.net.now < end, "EV 0 never retired"
        p.net.run(until_ns=p.net.now + 1000)
    return p


def test_a_quiet_retirement_carries_its_evidence_to_the_report():
    p = _retired_pair()
    [v] = p.qa.requester.verdicts
    assert v["kind"] == "quiet" and v["ev"] == 0 and v["cause"] == "rack"
    assert v["retired_ns"] >= v["suspect_ns"] + v["confirm_ns"] and v["suspect_ns"] >= v["t_ns"] >= v["sent_ns"]
    assert v["ev_rack_ts_ns"] < v["sent_ns"]  # nothing sent on the path at or after it was delivered
    assert v["age_ns"] >= min(v["late_limit_ns"], v["pto_ns"])
    f = OutFlow(3, "h2", 256 * 1024, 1, 1, qps=[p.qa])
    t0 = 100
    [a] = ev_verdicts({3: f}, t0)
    assert (a["flow"], a["dst"], a["qpn"], a["peer_qpn"]) == (3, "h2", p.qa.qpn, p.qb.qpn)
    assert a["sent_ns"] == v["sent_ns"] - t0 and a["retired_ns"] == v["retired_ns"] - t0
    assert a["age_ns"] == v["age_ns"]  # durations stay as they are
    dup_at = a["sent_ns"] + 7_000
    hosts = [{"ev_verdicts": [a]},
             {"rx_log": [[dup_at, 3, p.qa.qpn, p.qb.qpn, "dup", a["psn"], 2],
                         [dup_at, 3, p.qa.qpn, p.qb.qpn, "dup", (a["psn"] + 1) & 0xFFFFFF, 2],  # another PSN
                         [dup_at, 4, p.qa.qpn, p.qb.qpn, "dup", a["psn"], 2]]}]  # another flow
    [m] = _verdicts(hosts)
    assert m["responder"] == [[dup_at, "dup", 2]]
    [line] = verdict_lines({"ev_verdicts": [m]})
    assert f"quiet flow 3 ->h2 QP {p.qa.qpn:#x} EV 0" in line and f"PSN {a['psn']}" in line
    assert "responder: dup on EV 2 at +0.0 ms after its send" in line and "probe" in line


def test_a_packet_that_held_its_flow_reaches_the_report_with_its_resends():
    """``late_deliveries`` (agent) -> ``_late`` / ``late_lines`` (report): the packet the dead path lost
    held the cumulative ACK; it is kept with its first EV, its resend (cause, EV of the copy resent) and
    run-relative times, longest first."""
    from mrc_fabric.scenarios.agent import late_deliveries
    from mrc_fabric.scenarios.report import _late, late_lines

    p = _retired_pair(late_srtts=1)  # the lost packet's resend arrives ~2 srtts after its first send here
    end = p.net.now + 5_000_000
    while len(p.done) < 1:
        assert p.net.now < end, "the write never completed"
        p.net.run(until_ns=p.net.now + 1000)
        p.pump()
    f = OutFlow(3, "h2", 256 * 1024, 1, 1, qps=[p.qa])
    t0 = 100
    late = late_deliveries({3: f}, t0)
    held = _late([{"late_deliveries": late}])
    assert held and all(v["held_cum_ack"] for v in held)
    assert [v["delivery_ns"] for v in held] == sorted((v["delivery_ns"] for v in held), reverse=True)
    v = held[0]
    assert (v["flow"], v["dst"], v["qpn"], v["first_ev"]) == (3, "h2", p.qa.qpn, 0) and v["last_ev"] != 0
    assert v["resends"][0][1:] == ["rack", 0] and v["t_ns"] - v["first_sent_ns"] == v["delivery_ns"]
    [line] = late_lines({"late_deliveries": held}, 1)
    assert f"PSN {v['psn']}" in line and "on EV 0" in line and "rack on EV 0 at +" in line


def test_in_process_controller_warnings_name_their_switch():
    """A scenario's (and the demo's) controller runs in-process with no logging set up: its warnings
    must still say which switch, not print the bare "stream lost; reconnecting"."""
    import subprocess
    import sys

    code = ("import logging; from mrc_fabric.scenarios.runner import _controller_warnings_name_their_switch as f; "
            "f(); f(); logging.getLogger('controller').warning('stream lost; reconnecting', "
            "extra={'fields': {'switch': 'p1s2'}}); logging.getLogger('controller').info('quiet')")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].endswith("stream lost; reconnecting switch=p1s2"), r.stderr
