"""``Fabric.outside_drops`` reads every switch's ``port_stats`` at once: a hung switch (it accepts the
connection, never answers) costs one timeout per read, not one per switch, and is left out."""

from __future__ import annotations

import json
import socket
import socketserver
import threading
import time

from mrc_fabric.fabric import Fabric
from mrc_fabric.state import FabricState, ProcRecord


class _Answering(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        self.rfile.readline()
        rows = [{"port": 1, "rx_kernel_drops": 2, "queue_drops": 3, "rx_errors": 0, "tx_drops": 4, "queues": []}]
        self.wfile.write(json.dumps({"ok": True, "result": rows}).encode() + b"\n")


def test_outside_drops_reads_the_switches_at_once_and_leaves_out_a_hung_one(tmp_path):
    good = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Answering)
    threading.Thread(target=good.serve_forever, daemon=True).start()
    hung = [socket.socket() for _ in range(3)]  # listening, never accepting: connect works, no answer comes
    for s in hung:
        s.bind(("127.0.0.1", 0))
        s.listen(4)
    try:
        fab = Fabric.__new__(Fabric)
        fab.state = FabricState("t", target="softswitch", procs={
            "p1l1": ProcRecord("p1l1", [], runtime_port=good.server_address[1]),
            **{f"p1s{i}": ProcRecord(f"p1s{i}", [], runtime_port=s.getsockname()[1]) for i, s in enumerate(hung)}})
        t0 = time.monotonic()
        out = fab.outside_drops()
        took = time.monotonic() - t0
        assert out["kernel_rx_drops"] == {"p1l1": 2} and out["tx_drops"] == {"p1l1": 4}
        assert out["queue_tail_drops"] == {"p1l1": 3}
        assert took < 10.0, took  # one 5 s timeout; one after the other it was 15 s
    finally:
        good.shutdown()
        good.server_close()
        for s in hung:
            s.close()
