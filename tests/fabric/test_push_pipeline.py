"""``push_pipeline``: the fabric loads the pipeline into a switch whose shaping needs one (bmv2's
simple_switch_CLI reads the running JSON config first, empty under --no-p4), without ever taking a
switch from a controller.  Real gRPC on loopback against an in-process softswitch P4Runtime server."""
from __future__ import annotations

import os
import threading
import time

import pytest

from controller.session import SwitchSession
from mrc_fabric.targets import TargetError, get_target, load_pipeline, push_pipeline, running_cookie
from softswitch.p4rt import P4RuntimeServer
from softswitch.runtime import SwitchState


@pytest.fixture(scope="module")
def pipeline():
    return load_pipeline("softswitch", os.environ.get("MRC_P4_PROGRAM"))


def _server(device_id: int = 3) -> tuple[P4RuntimeServer, str]:
    srv = P4RuntimeServer(device_id, lambda info, cfg: SwitchState(info), lambda f: None, "127.0.0.1:0")
    return srv, f"127.0.0.1:{srv.start()}"


def test_push_once_then_keep_and_never_take_over(pipeline):
    srv, addr = _server()
    ctl = SwitchSession("s", addr, 3, 7)
    try:
        assert running_cookie(addr, 3) is None
        assert push_pipeline("s", addr, 3, pipeline) is True  # the switch ran nothing
        assert running_cookie(addr, 3) == pipeline.cookie
        assert push_pipeline("s", addr, 3, pipeline) is False  # a pipeline runs: left as it is
        ctl.connect(5)
        assert ctl.wait_primary(5)
        assert ctl.get_pipeline_cookie() == pipeline.cookie  # what the controller compares: it keeps it
        assert push_pipeline("s", addr, 3, pipeline, timeout_s=2) is False  # asks without arbitrating
        assert ctl.is_primary  # the controller keeps the switch
    finally:
        ctl.close()
        srv.stop()


@pytest.mark.parametrize("election_id", [7, 1])
def test_restarted_switch_held_by_a_controller_waits_for_its_pipeline(pipeline, election_id):
    """A restarted switch a controller has reconnected to (primary, maybe with the same election id 1)
    but not loaded yet: never pushed over it; waited for, bounded."""
    srv, addr = _server()
    ctl = SwitchSession("s", addr, 3, election_id)
    try:
        ctl.connect(5)
        assert ctl.wait_primary(5)
        with pytest.raises(TargetError, match=r"another P4Runtime client .* no pipeline runs after 0\.5 s"):
            push_pipeline("s", addr, 3, pipeline, timeout_s=2, wait_s=0.5)
        assert ctl.is_primary and running_cookie(addr, 3) is None
        loader = threading.Timer(0.5, ctl.set_pipeline, (pipeline,))
        loader.start()
        try:
            t0 = time.monotonic()
            assert push_pipeline("s", addr, 3, pipeline, timeout_s=2, wait_s=10) is False
            assert time.monotonic() - t0 < 8
        finally:
            loader.join()
        assert ctl.is_primary and running_cookie(addr, 3) == pipeline.cookie
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


@pytest.mark.parametrize("answer, expect", [("empty", None), ("no-cookie", 0), ("cookie", 42)])
def test_running_cookie_reads_an_empty_config_as_none(answer, expect):
    """PI, after a failed SetForwardingPipelineConfig, answers OK with an empty config (its device
    manager exists, its config is not set): that is no pipeline -- else the fabric would skip the push
    and simple_switch_CLI would fail on the empty JSON.  A real gRPC server answering as PI does."""
    from concurrent import futures

    import grpc
    from p4.config.v1 import p4info_pb2
    from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

    class PiLike(p4runtime_pb2_grpc.P4RuntimeServicer):
        def GetForwardingPipelineConfig(self, request, context):
            resp = p4runtime_pb2.GetForwardingPipelineConfigResponse()
            resp.config.SetInParent()
            if answer != "empty" and request.response_type != request.COOKIE_ONLY:
                resp.config.p4info.CopyFrom(p4info_pb2.P4Info(tables=[p4info_pb2.Table()]))
            if answer == "cookie":
                resp.config.cookie.cookie = 42
            return resp

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    p4runtime_pb2_grpc.add_P4RuntimeServicer_to_server(PiLike(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        assert running_cookie(f"127.0.0.1:{port}", 1, timeout_s=5) == expect
    finally:
        server.stop(None)
