"""Interface/namespace naming and switch command lines (no root needed)."""
from __future__ import annotations

import pytest

from controller.topogen import clos
from mrc_fabric.naming import IFNAMSIZ, Names, NamingError, check_prefix
from mrc_fabric.switches import SwitchError, switch_argv


def test_prefix_rules():
    assert check_prefix("h7") == "h7"
    for bad in ("", "7h", "H7", "h7-x", "abcdefg"):
        with pytest.raises(NamingError, match="prefix"):
            check_prefix(bad)


def test_names_unique_and_short_on_large_fabric():
    t = clos(4, 4, 4, 2)
    n = Names.for_topology("abcdef", t)
    ifs = [n.switch_if(s, p) for s in t.switches for p in t.ports_of(s)]
    assert len(ifs) == len(set(ifs))
    assert max(map(len, ifs)) <= IFNAMSIZ
    assert n.netns("h3") == "abcdef-h3" and n.host_if(2) == "nic2"


def test_too_long_interface_name_is_reported():
    n = Names("abcdef", {"big": 10000})
    with pytest.raises(NamingError, match="switch big port 510"):
        n.switch_if("big", 510)


def test_switch_argv_softswitch_and_bmv2():
    a = switch_argv("softswitch", 3, {2: "h7s3p2", 1: "h7s3p1"}, 47702, runtime_port=48702,
                    queue_depth={1: 16}, link_delay={2: 50})
    s = " ".join(a)
    assert "--device-id 3 -i 1@h7s3p1 -i 2@h7s3p2" in s
    assert "--queue-depth 1:16" in s and "--link-delay 2:50" in s and "--runtime-addr 127.0.0.1:48702" in s
    assert a[-6:] == ["--no-p4", "--", "--grpc-server-addr", "127.0.0.1:47702", "--cpu-port", "255"]
    b = switch_argv("bmv2", 1, {1: "x"}, 9559, queue_depth={1: 16})
    assert b[0] == "simple_switch_grpc" and "--queue-depth" not in b
    with pytest.raises(SwitchError, match="unknown target"):
        switch_argv("tofino", 1, {}, 1)


@pytest.mark.parametrize("busy", ["grpc", "runtime"])
def test_a_switch_whose_port_is_taken_is_not_started(tmp_path, busy):
    """Both ports a switch binds are checked before it starts: bmv2 binds its Thrift (runtime) port
    only after its gRPC server is up, and a failed bind there ends it after it looked ready."""
    import socket

    from mrc_fabric.state import ProcRecord
    from mrc_fabric.switches import start
    from softswitch.api import free_tcp_port

    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen(1)
        taken = srv.getsockname()[1]
        free = free_tcp_port()
        rec = ProcRecord("p1s1", ["/bin/true"], log=str(tmp_path / "s.log"),
                         grpc_port=taken if busy == "grpc" else free, runtime_port=taken if busy == "runtime" else free)
        with pytest.raises(SwitchError, match=f"{'gRPC' if busy == 'grpc' else 'runtime'} port {taken} is already in use"):
            start(rec)
        assert rec.pid == 0
