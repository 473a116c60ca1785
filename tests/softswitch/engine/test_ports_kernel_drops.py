"""Frames the kernel drops before the switch reads them are counted (PACKET_STATISTICS), on a real veth."""
from __future__ import annotations

import socket

from polling import wait_for

from softswitch.engine.ports import ETH_P_ALL, LinuxPort


def test_kernel_receive_drops_are_counted_and_kept_across_reads(veth_factory):
    a, b = veth_factory("h11kd0", "h11kd1")
    port = LinuxPort(1, a)
    assert port.open()
    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    try:
        port.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a few frames: the rest is dropped
        tx.bind((b, 0))
        frame = b"\xff" * 6 + b"\x02\x00\x00\x00\x00\x01" + b"\x88\xb5" + bytes(1000)
        sent = port.ring_slots + 300  # more than the rx ring holds (with the ring, SO_RCVBUF does not bound it)
        for _ in range(sent):
            tx.send(frame)
        drops = wait_for(lambda: port.kernel_drops() or None, what="kernel receive drops")
        got = len(port.receive(sent))
        assert 0 < drops and got + port.kernel_drops() <= sent and got > 0
        assert port.kernel_drops() >= drops  # reading resets the kernel's count; ours keeps the sum
        assert port.counters.rx_kernel_drops == port.kernel_drops()
        before = port.kernel_drops()
        port.close()  # the last count of the old socket is kept
        assert port.counters.rx_kernel_drops >= before
    finally:
        tx.close()
        port.close()
