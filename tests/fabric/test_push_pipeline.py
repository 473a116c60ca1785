"""``push_pipeline``: the fabric loads the pipeline into a switch whose shaping needs one (bmv2's
simple_switch_CLI reads the running JSON config first, empty under --no-p4), without ever taking a
switch from a controller.  Real gRPC on loopback against an in-process softswitch P4Runtime server."""
from __future__ import annotations

import os

import pytest

from controller.session import SwitchSession
from mrc_fabric.targets import TargetError, get_target, load_pipeline, push_pipeline
from softswitch.p4rt import P4RuntimeServer
from softswitch.runtime import SwitchState


@pytest.fixture(scope="module")
def pipeline():
    return load_pipeline("softswitch", os.environ.get("MRC_P4_PROGRAM"))


def test_push_once_then_keep_and_never_take_over(pipeline):
    srv = P4RuntimeServer(3, lambda info, cfg: SwitchState(info), lambda f: None, "127.0.0.1:0")
    addr = f"127.0.0.1:{srv.start()}"
    ctl = SwitchSession("s", addr, 3, 7)
    try:
        assert push_pipeline("s", addr, 3, pipeline) is True  # the switch ran nothing
        assert push_pipeline("s", addr, 3, pipeline) is False  # same cookie: left as it is
        ctl.connect(5)
        assert ctl.wait_primary(5)
        assert ctl.get_pipeline_cookie() == pipeline.cookie  # what the controller compares: it keeps it
        with pytest.raises(TargetError, match="another P4Runtime client is primary"):
            push_pipeline("s", addr, 3, pipeline, timeout_s=2)
        assert ctl.is_primary  # the controller keeps the switch
    finally:
        ctl.close()
        srv.stop()


def test_unreachable_switch_is_a_target_error(pipeline):
    with pytest.raises(TargetError, match="switch s: loading the pipeline failed"):
        push_pipeline("s", "127.0.0.1:1", 1, pipeline, timeout_s=1)


def test_only_bmv2_needs_a_pipeline_before_shaping():
    assert get_target("bmv2").shapes_need_pipeline and not get_target("softswitch").shapes_need_pipeline


def test_bmv2_cli_runs_without_this_virtualenv_on_path(monkeypatch):
    """simple_switch_CLI (``#!/usr/bin/env python3``) needs bmv2's Python modules and thrift from the
    system Python: the project's virtualenv, first on PATH in the Docker image, is taken off for it."""
    import sys

    from mrc_fabric.targets.bmv2 import _system_python_env

    if sys.prefix == sys.base_prefix:
        pytest.skip("not running in a virtualenv: nothing to take off PATH")
    venv_bin = os.path.join(sys.prefix, "bin")
    monkeypatch.setenv("PATH", os.pathsep.join([venv_bin, "/usr/bin", "/bin"]))
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    env = _system_python_env()
    assert env["PATH"].split(os.pathsep) == ["/usr/bin", "/bin"] and "VIRTUAL_ENV" not in env
