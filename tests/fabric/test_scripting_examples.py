"""The scripting examples (examples/scripting/) run as a user runs them, as subprocesses, each on its
own fabric (prefixes and gRPC ports no other test uses), and print the summary they promise.  Root
for the runs; ``--help`` and the not-root refusal need nothing."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "scripting"
TOUR, DIRECT = EXAMPLES / "fabric_tour.py", EXAMPLES / "p4runtime_direct.py"
RUN_TIMEOUT_S = 150  # each run takes ~15 s on the shared 2-core machine; bounded well above


def _run(script: Path, *args: str, timeout: float = RUN_TIMEOUT_S, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(script), *args], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout, check=False, **kw)


def _leftovers(prefix: str) -> list[str]:
    ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False).stdout
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True, check=False).stdout
    return ([ln.split()[0] for ln in ns.splitlines() if ln.startswith(f"{prefix}-")]
            + [ln.split(": ")[1].split("@")[0] for ln in links.splitlines() if f": {prefix}s" in ln])


@pytest.mark.parametrize("script", [TOUR, DIRECT], ids=["tour", "direct"])
def test_help_names_the_options(script):
    r = _run(script, "--help", timeout=60)
    assert r.returncode == 0, r.stderr
    for opt in ("--topology", "--target", "--prefix", "--grpc-base-port"):
        assert opt in r.stdout


@pytest.mark.parametrize("script", [TOUR, DIRECT], ids=["tour", "direct"])
def test_refuses_without_root(script):
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0:
        r = _run(script, timeout=60)
    elif setpriv:  # as root: run it as nobody
        r = subprocess.run([setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, str(script)],
                           cwd=REPO, capture_output=True, text=True, timeout=60, check=False)
        if "Permission denied" in r.stderr and "needs root" not in r.stderr:
            pytest.skip("nobody cannot read the checkout")
    else:
        pytest.skip("needs setpriv to drop root")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "needs root" in r.stderr


@pytest.mark.root
def test_fabric_tour(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces, veth, AF_PACKET)")
    r = _run(TOUR, "--prefix", "xt1", "--grpc-base-port", "25600", "--workdir", str(tmp_path))
    out = r.stdout
    assert r.returncode == 0, out + r.stderr[-2000:]
    assert "SUMMARY converge: 8/8 switches" in out
    assert "SUMMARY wiring: 8/8 links up" in out
    assert "SUMMARY traffic: h1->h3 1048576 bytes verified" in out
    assert "SUMMARY fault: p1l1:1--p1s1:1 dead, 7/8 links up; traffic 1048576 bytes verified" in out
    assert "SUMMARY repair: 8/8 links up; reconcile of 8 switches wrote 0" in out
    assert "SUMMARY daemon: run() showed p1l1:1--p1s1:1 dead in" in out
    assert out.rstrip().endswith("RESULT PASS")
    assert _leftovers("xt1") == []


@pytest.mark.root
def test_p4runtime_direct(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces, veth, AF_PACKET)")
    r = _run(DIRECT, "--prefix", "xt2", "--grpc-base-port", "25700", "--workdir", str(tmp_path))
    out = r.stdout
    assert r.returncode == 0, out + r.stderr[-2000:]
    assert "SUMMARY converge: 8/8 switches" in out
    assert "SUMMARY p4rt: ingress.routing.route_v6 9 entries read; counters read for 4 ports; " \
           "INSERT/read/DELETE of 2001:db8::/32 ok" in out
    assert "SUMMARY reconcile: 2 entities written on p1l1, ingress.routing.route_v6 restored" in out
    assert out.rstrip().endswith("RESULT PASS")
    # the drift the script made is what the controller logged and repaired
    assert "drift switch=p1l1 op=DELETE entity=route_v6 dst_addr=2001:db8::/32" in r.stderr
    assert _leftovers("xt2") == []


@pytest.mark.root
def test_a_bad_step_exits_1_before_building_anything(tmp_path):
    """A step that cannot be done (a link the topology does not have) is named, and no fabric is built."""
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces, veth, AF_PACKET)")
    r = _run(TOUR, "--prefix", "xt3", "--grpc-base-port", "25800", "--workdir", str(tmp_path),
             "--fail", "p1l1,p2s1", timeout=60)
    assert r.returncode == 1, r.stdout + r.stderr[-2000:]
    assert "RESULT FAIL: --fail p1l1,p2s1: no link between p1l1 and p2s1 in" in r.stdout
    assert "[fabric]" not in r.stdout
    assert _leftovers("xt3") == []
