"""Python API: in-process and subprocess switches become ready by polling gRPC and stop cleanly."""
from __future__ import annotations

import pytest

from softswitch import SoftSwitch, SoftSwitchError
from softswitch.api import free_tcp_port, grpc_ready
from softswitch.engine.control import send_command


def test_in_process_no_p4_answers_grpc_and_runtime_control():
    ctl = f"127.0.0.1:{free_tcp_port()}"
    with SoftSwitch(runtime_addr=ctl) as sw:
        assert grpc_ready(sw.grpc_addr)
        send_command(ctl, "set_queue_rate", [1000, 1])
        assert sw.switch.tm.stats(1)[0]["rate_pps"] == 1000
    assert sw.returncode == 0
    assert not grpc_ready(sw.grpc_addr, timeout=0.3)


def test_subprocess_stops_with_exit_code_zero():
    with SoftSwitch(subprocess=True) as sw:
        assert grpc_ready(sw.grpc_addr)
        pid = sw.process.pid
    assert sw.returncode == 0 and pid > 0


def test_subprocess_start_failure_reports_exit_code_and_log(tmp_path):
    with pytest.raises(SoftSwitchError) as e:
        SoftSwitch(tmp_path / "missing.p4", subprocess=True, start_timeout=30).start()
    assert "exited with code 1" in str(e.value)
    assert "softswitch: error:" in str(e.value)
