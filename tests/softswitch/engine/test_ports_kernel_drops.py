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


def test_a_frame_larger_than_the_ring_slot_is_an_rx_error_shown_in_port_stats(veth_factory):
    """The ring slot is sized from the MTU at open; a frame bigger than the slot (here: the MTU
    raised before the loop's link check re-sizes the ring; likewise a peer's GSO super-frame) is
    cut by the kernel, so the port drops it -- and ``port_stats`` must show that drop."""
    import subprocess

    from softswitch.engine.loop import PacketLoop
    from softswitch.engine.tm import TrafficManager

    a, b = veth_factory("h11rx0", "h11rx1")
    port = LinuxPort(1, a)
    assert port.open() and port.ring is not None
    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    try:
        for ifname in (a, b):
            subprocess.run(["ip", "link", "set", ifname, "mtu", "9000"], check=True, timeout=10)
        tx.bind((b, 0))
        small = b"\xff" * 6 + b"\x02\x00\x00\x00\x00\x01" + b"\x88\xb5" + bytes(100)
        big = small + bytes(port.ring_frame)  # longer than a slot
        tx.send(big)
        tx.send(small)
        got = wait_for(lambda: port.receive(8) or None, what="the small frame")
        assert got == [small]
        assert port.counters.rx_errors == 1
        row = PacketLoop(TrafficManager(), [port]).port_stats()[0]
        assert (row["rx_packets"], row["rx_errors"]) == (1, 1)
    finally:
        tx.close()
        port.close()
