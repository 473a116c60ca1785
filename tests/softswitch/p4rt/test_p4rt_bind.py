"""A second switch cannot take the addresses of a running one.  gRPC sets SO_REUSEPORT on its
listening sockets by default, so a second softswitch on the same --grpc-server-addr used to start
without a word and take a share of the connections (the kernel spreads them over both)."""
from __future__ import annotations

import pytest

from softswitch.api import free_tcp_port
from softswitch.p4rt.server import P4RuntimeServer
from softswitch.switch import Switch, SwitchConfig, SwitchError


def test_second_p4runtime_server_on_a_busy_address_is_refused():
    addr = f"127.0.0.1:{free_tcp_port()}"
    first = P4RuntimeServer(1, lambda *a: None, lambda f: None, addr)
    first.start()
    try:
        second = P4RuntimeServer(1, lambda *a: None, lambda f: None, addr)
        with pytest.raises(OSError, match=f"cannot bind P4Runtime server to {addr}"):
            second.start()
    finally:
        first.stop()
    again = P4RuntimeServer(1, lambda *a: None, lambda f: None, addr)  # free again once stopped
    assert again.start() == int(addr.rsplit(":", 1)[1])
    again.stop()


def test_busy_runtime_addr_names_the_option(busy_port):
    cfg = SwitchConfig(grpc_addr=f"127.0.0.1:{free_tcp_port()}", runtime_addr=f"127.0.0.1:{busy_port}")
    sw = Switch(cfg)
    with pytest.raises(SwitchError, match=f"--runtime-addr 127.0.0.1:{busy_port}: Address already in use"):
        sw.start()
    assert sw._stopped.is_set()


def test_an_address_without_a_port_is_named_as_such():
    # `--grpc-server-addr garbage` said "address in use or not local", which sent users looking for
    # another process
    for addr in ("garbage", "127.0.0.1", "127.0.0.1:http"):
        srv = P4RuntimeServer(1, lambda *a: None, lambda f: None, addr)
        with pytest.raises(OSError, match=r"\(not HOST:PORT\)"):
            srv.start()
