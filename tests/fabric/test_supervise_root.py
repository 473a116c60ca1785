"""Issue 14 finding 8 on a real fabric: a crashed softswitch comes back by itself with the reason
in its log and in ``status``; ``switch_stop`` (the fault) is never undone.  Needs root."""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from controller.topology import load_topology
from mrc_fabric.fabric import Fabric
from mrc_fabric.switches import port_open

pytestmark = pytest.mark.root
SMALL = Path(__file__).resolve().parents[2] / "examples" / "small.yaml"


@pytest.fixture(autouse=True)
def _root():
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces, veth, AF_PACKET)")


def _wait(pred, timeout_s: float) -> bool:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:  # deadline-bounded poll of the switch processes
        if pred():
            return True
        time.sleep(0.05)
    return pred()


def test_crashed_switch_is_restarted_and_a_stopped_one_is_not(tmp_path):
    fab = Fabric(load_topology(SMALL), prefix="h14v", target="softswitch", state_dir=tmp_path,
                 grpc_base_port=21940, runtime_port_offset=50)
    with fab:
        rec = fab.state.procs["p1s1"]
        sup = fab.status()["switches"]["p1s1"]["supervisor"]
        assert sup["state"] == "running" and sup["restarts"] == 0
        child = sup["child_pid"]
        os.kill(child, signal.SIGKILL)  # the crash: the switch dies on its own
        assert _wait(lambda: (fab.status()["switches"]["p1s1"]["supervisor"].get("restarts") == 1
                              and port_open(rec.grpc_port)), 30)
        st = fab.status()["switches"]["p1s1"]
        assert st["running"] and st["grpc_answers"] and st["pid"] == rec.pid  # same supervisor
        assert st["supervisor"]["last_exit"] == "killed by signal SIGKILL (9)"
        assert st["supervisor"]["child_pid"] != child
        # what each running softswitch lost outside its pipeline, receive-ring errors included
        full = fab.status()
        assert {"kernel_rx_drops", "queue_tail_drops", "rx_errors", "tx_drops"} <= set(full)
        assert full["rx_errors"]["p1s1"] == 0 and set(full["rx_errors"]) == set(full["kernel_rx_drops"])
        assert set(full["tx_drops"]) == set(full["kernel_rx_drops"])
        assert "ended by itself: killed by signal SIGKILL" in Path(rec.log).read_text()
        # the fault: stopped on purpose, and it stays stopped
        fab.switch_stop("p1s2")
        st2 = fab.status()["switches"]["p1s2"]
        assert not st2["running"] and not st2["grpc_answers"]
        assert st2["supervisor"]["state"] == "stopped" and st2["supervisor"]["restarts"] == 0
        fab.switch_start("p1s2")
        assert fab.status()["switches"]["p1s2"]["grpc_answers"]
    assert not any(Path(f"/proc/{p}").exists() for p in (child,))
