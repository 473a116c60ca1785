"""Ctrl-C during a switch start must not lose the switch's PID (no root needed).

A SIGINT that arrived while ``subprocess.Popen`` forked and exec'd raised KeyboardInterrupt after the
child existed but before its PID was known: `mrc-fabric up` interrupted there left a supervisor and
its softswitch running, recorded nowhere (`mrc-fabric down`: "nothing recorded"; the next `up`:
"gRPC port ... already in use").  ``switches.start`` now holds SIGINT/SIGTERM until the PID and
start time are recorded, then delivers them."""
from __future__ import annotations

import signal
import sys

import pytest

from mrc_fabric import switches
from mrc_fabric.state import ProcRecord


def test_a_signal_inside_the_block_is_delivered_after_it_to_the_old_handler():
    got: list[tuple[int, bool]] = []
    inside = [False]
    old = signal.signal(signal.SIGINT, lambda s, f: got.append((s, inside[0])))
    try:
        with switches._interrupts_deferred():
            inside[0] = True
            signal.raise_signal(signal.SIGINT)
            signal.raise_signal(signal.SIGINT)  # twice: delivered once
            assert got == []
            inside[0] = False
        assert got == [(signal.SIGINT, False)]
    finally:
        signal.signal(signal.SIGINT, old)


def test_ctrl_c_during_start_still_records_the_child(tmp_path):
    """KeyboardInterrupt (Python's default SIGINT handler) reaches the caller only once the PID and
    start time are in the record, so teardown can stop the process."""
    rec = ProcRecord(switch="sx", argv=[sys.executable, "-c", "import time; time.sleep(30)"],
                     log=str(tmp_path / "sx.log"), grpc_port=1, runtime_port=0)
    real_popen = switches.subprocess.Popen
    old = signal.signal(signal.SIGINT, signal.default_int_handler)

    def popen_then_ctrl_c(*a, **kw):  # the real Popen; the signal lands as it returns
        p = real_popen(*a, **kw)
        signal.raise_signal(signal.SIGINT)
        return p

    switches.subprocess.Popen = popen_then_ctrl_c
    try:
        with pytest.raises(KeyboardInterrupt):
            switches.start(rec)
    finally:
        switches.subprocess.Popen = real_popen
        signal.signal(signal.SIGINT, old)
    try:
        assert rec.pid and rec.start_time, "the child was started but its PID was lost"
        assert switches.is_running(rec)
    finally:
        assert switches.stop(rec, None, grace_s=2)
