"""mrc-fabric's arguments: refused with one line before anything is built (no root needed)."""
from __future__ import annotations

import pytest

from controller import load_topology
from mrc_fabric.cli import main
from mrc_fabric.fabric import Fabric, FabricError


@pytest.mark.parametrize(("argv", "said"), [
    (["demo", "--view-port", "70000"], "--view-port must be 0 (none) .. 65535, got 70000"),  # OverflowError after bring-up
    (["demo", "--metrics-port", "-1"], "--metrics-port must be 0 (none) .. 65535, got -1"),
    (["demo", "--grpc-base-port", "0"], "--grpc-base-port must be 1 .. 65535, got 0"),
    (["scenario", "run", "examples/sim/small-link-down.yaml", "--grpc-base-port", "70000"],
     "--grpc-base-port must be 1 .. 65535, got 70000"),
])
def test_ports_out_of_range(argv, said, capsys):
    assert main([*argv, "--prefix", "nofab"]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err


def test_out_that_is_a_file(tmp_path, capsys):
    """A FileExistsError traceback; the sim engine hit it only after the whole run."""
    f = tmp_path / "f"
    f.write_text("keep")
    for argv in (["demo"], ["scenario", "run", "examples/sim/small-link-down.yaml", "--engine", "sim"]):
        assert main([*argv, "--out", str(f)]) == 2
        assert f"--out {f}: exists and is not a directory" in capsys.readouterr().err
    assert f.read_text() == "keep"


def test_fabric_refuses_ports_past_65535_before_building():
    """`up --grpc-base-port 65000` built namespaces and veths, then a switch died on its run-time port 66000."""
    topo = load_topology("examples/small.yaml")
    for base, port in ((70000, "gRPC port 70000"), (65000, "run-time control port 66000")):
        with pytest.raises(FabricError, match=f"switch p1s1: {port} is not 1..65535 .*--grpc-base-port {base}"):
            Fabric(topo, prefix="nofab", target="softswitch", grpc_base_port=base)
    with pytest.raises(FabricError, match="--ready-timeout"):
        Fabric(topo, prefix="nofab", target="softswitch", ready_timeout_s=-1)
    Fabric(topo, prefix="nofab", target=None, grpc_base_port=70000)  # network only: no switch ports used
