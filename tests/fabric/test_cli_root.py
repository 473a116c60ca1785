"""mrc-fabric CLI end to end (network only): up, status, link fault, refusal, down."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from pyroute2 import netns as pnetns

from mrc_fabric import netbuild
from mrc_fabric.cli import main
from mrc_fabric.fabric import down_prefix

pytestmark = pytest.mark.root
SMALL = Path(__file__).resolve().parents[2] / "examples" / "small.yaml"


def test_cli_up_status_fault_down(tmp_path, capsys):
    if os.geteuid() != 0:
        pytest.skip("needs root")
    common = ["--prefix", "h7q", "--state-dir", str(tmp_path)]
    try:
        assert main(["up", "-t", str(SMALL), "--target", "none", *common]) == 0
        assert "h7q-h1" in pnetns.listnetns()
        assert main(["up", "-t", str(SMALL), "--target", "none", *common]) == 2
        assert "already up" in capsys.readouterr().err
        assert main(["fault", "link-down", "p2l2", "p2s1", *common]) == 0
        assert not netbuild.link_info("h7qs8p1")["up"]
        assert main(["status", "--json", *common]) == 0
        st = json.loads(capsys.readouterr().out.split("\n", 1)[1])
        assert st["links"]["p2l2:1--p2s1:2"]["up"] is False
        assert sum(lk["up"] for lk in st["links"].values()) == 15
        assert main(["fault", "link-up", "p2l2:1", "p2s1:2", *common]) == 0
        assert netbuild.link_info("h7qs8p1")["up"]  # p2l2 is the 8th switch
        assert main(["fault", "switch-stop", "p1s1", *common]) == 2
        assert "no process" in capsys.readouterr().err
        assert main(["reshape", "p1s1", *common]) == 2
        assert "switch p1s1 has no process in this fabric" in capsys.readouterr().err
        assert main(["fault", "link-down", "p1l1", "nosuch", *common]) == 2
        assert "fault link-down: no link between p1l1 and nosuch in the topology" in capsys.readouterr().err
        assert main(["down", *common]) == 0
        assert "deleted netns h7q-h4" in capsys.readouterr().out
        assert not [n for n in pnetns.listnetns() if n.startswith("h7q-")]
        assert main(["status", *common]) == 2
    finally:
        down_prefix("h7q", tmp_path)


@pytest.mark.timeout(300)
def test_sigterm_during_up_tears_down_what_it_built(tmp_path):
    """`mrc-fabric up` (without --wait) ended by SIGTERM half-way -- `timeout`, a cancelled CI job --
    died at once (rc 143) and left its namespaces, veths and switch processes (only `mrc-fabric
    down` removed them); Ctrl-C there undid the bring-up.  Now SIGTERM undoes it too."""
    import signal
    import subprocess
    import sys
    import time

    if os.geteuid() != 0:
        pytest.skip("needs root")
    prefix = "h7t"
    state = tmp_path / f"{prefix}.json"
    proc = subprocess.Popen([sys.executable, "-m", "mrc_fabric", "up", "-t", str(SMALL), "--prefix", prefix,
                             "--state-dir", str(tmp_path), "--grpc-base-port", "29759"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:  # the bring-up has made something
            try:
                if json.loads(state.read_text()).get("namespaces"):
                    break
            except (OSError, ValueError):
                pass
            time.sleep(0.005)
        assert proc.poll() is None, f"up ended before the signal could be sent: {proc.communicate()[0]}"
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 143, out
        assert not [n for n in pnetns.listnetns() if n.startswith(prefix)]
        assert not [i for i in os.listdir("/sys/class/net") if i.startswith(prefix)]
        assert not state.exists()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        down_prefix(prefix, tmp_path)


@pytest.mark.timeout(240)
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_interrupted_timed_fault_is_undone(tmp_path, capsys, sig):
    """`mrc-fabric fault flap A B --duration 30` ended by Ctrl-C or SIGTERM during its wait left the link
    down for good (rc 130 / 143, nobody left to bring it up), and `--duration inf` took the link down and
    then died in the wait with an OverflowError traceback, link still down.  Now an interrupted wait undoes
    the fault at once, and a duration that is not a finite number of seconds is refused before the fault."""
    import signal
    import subprocess
    import sys
    import time

    if os.geteuid() != 0:
        pytest.skip("needs root")
    prefix = "h7f"
    common = ["--prefix", prefix, "--state-dir", str(tmp_path)]
    try:
        assert main(["up", "-t", str(SMALL), "--target", "none", *common]) == 0
        for bad in ("inf", "nan", "-1"):
            assert main(["fault", "flap", "p1l1", "p1s1", "--duration", bad, *common]) == 2
            assert "--duration must be 0 (keep the fault) or more seconds" in capsys.readouterr().err
            assert main(["fault", "nic-down", "h1", "1", "--duration", bad, *common]) == 2
        assert netbuild.link_info(f"{prefix}s3p1")["up"]  # p1l1 is the 3rd switch, port 1 to p1s1
        proc = subprocess.Popen([sys.executable, "-m", "mrc_fabric", "fault", "flap", "p1l1", "p1s1",
                                 "--duration", "60", *common],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and proc.poll() is None and netbuild.link_info(f"{prefix}s3p1")["up"]:
                time.sleep(0.02)
            assert proc.poll() is None and not netbuild.link_info(f"{prefix}s3p1")["up"], "the flap never began"
            proc.send_signal(getattr(signal, sig))
            out, _ = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
        assert proc.returncode == 130, out
        assert "undoing the fault" in out and "link p1l1-p1s1 up" in out, out
        assert netbuild.link_info(f"{prefix}s3p1")["up"]
        assert netbuild.link_info(f"{prefix}s1p1")["up"]
    finally:
        down_prefix(prefix, tmp_path)
