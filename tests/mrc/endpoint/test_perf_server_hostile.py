"""Issue 14 finding 6: no bootstrap peer can end or stall ``mrc-perf server --forever``.

Hostile peers talk to a real server over a unix socket.  Every hello here is refused before the
server opens its interfaces, so no namespace is needed (the full transfer after hostile peers
is in tests/robustness)."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mrc.endpoint.bootstrap import MAX_LINE, Address, Listener
from mrc.endpoint.perf import HostConfig, ServerLimits, serve_forever

GOOD = {"hello": 1, "gid": "fd00::1", "ports": {"1": "02:00:00:00:00:01"}, "mode": "mrc", "encap": "srv6",
        "mtu": 1500, "mpr": 1, "qps": 1, "size": 4096, "imm": False, "seed": 1, "verify": True}


def bad(**kw) -> bytes:
    return json.dumps({**GOOD, **kw}).encode() + b"\n"


# (what, bytes to send or None for connect-then-close, the error the peer must get or None)
HOSTILE = [
    ("garbage line", b"\x00\xffnot json at all\n", "not JSON"),
    ("connect then close", None, None),
    ("2 MiB line", b"x" * (2 << 20), "longer than"),
    ("JSON array", b"[1,2,3]\n", "not a JSON object"),
    ("deep nesting", b"[" * 50000 + b"\n", "not JSON"),
    ("qps -1", bad(qps=-1), "'qps'"),
    ("qps 20000", bad(qps=20000), "'qps'"),
    ("qps float", bad(qps=1.5), "'qps'"),
    ("size 2^70", bad(size=2 ** 70), "'size'"),
    ("qps x size", bad(qps=64, size=1 << 30), "--max-bytes"),
    ("bad GID", bad(gid="not-a-gid"), "bad GID"),
    ("GID number", bad(gid=12), "bad GID"),
    ("mpr 10^6", bad(mpr=10 ** 6), "'mpr'"),
    ("mtu 0", bad(mtu=0), "'mtu'"),
    ("bad mode", bad(mode="udp"), "'mode'"),
    ("wrong version", bad(hello=99), "unsupported hello"),
    ("encap", bad(encap="stev"), "encap mismatch"),
    ("ports list", bad(ports=[1, 2]), "'ports'"),
    ("bad MAC", bad(ports={"1": "zz"}), "bootstrap"),
    ("port 2^40", bad(ports={str(2 ** 40): "02:00:00:00:00:01"}), "port numbers"),
    ("imm string", bad(imm="yes"), "'imm'"),
    ("missing keys", b'{"hello": 1, "encap": "srv6"}\n', "bootstrap"),
    ("error message", b'{"error": "boo"}\n', "peer: boo"),
    ("huge int", b'{"hello": 1, "qps": ' + b"9" * 5000 + b"}\n", "not JSON"),
]


def talk(path: str, data: bytes | None, timeout: float = 5.0) -> dict | None:
    """Send ``data`` (None: just close) and return the server's answer line (None if it closed)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(path)
        if data is None:
            return None
        try:
            s.sendall(data)
        except OSError:
            pass  # the server may close on a too-long line before it is all sent
        buf = b""
        while b"\n" not in buf:
            try:
                chunk = s.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            buf += chunk
        return json.loads(buf.split(b"\n", 1)[0]) if buf.strip() else None
    finally:
        s.close()


class Daemon:
    def __init__(self, tmp_path: Path, **limits) -> None:
        self.path = str(tmp_path / "perf.sock")
        self.listener = Listener(Address("unix", path=self.path))
        self.errors: list[str] = []
        self.results: list[dict] = []
        self.stop = threading.Event()
        host = HostConfig(ifaces=[(1, "mrc-no-such-if0")])  # never opened: every hello here is refused first
        self.thread = threading.Thread(target=serve_forever, args=(
            host, self.listener, ServerLimits(**limits), self.results.append, self.errors.append, self.stop))
        self.thread.start()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(10)
        self.listener.close()


@pytest.fixture()
def daemon(tmp_path):
    d = Daemon(tmp_path, hello_timeout=2.0)
    try:
        yield d
    finally:
        d.close()


def test_hostile_bootstrap_peers_never_end_the_daemon(daemon):
    for what, data, want in HOSTILE:
        answer = talk(daemon.path, data)
        if want is None:
            assert answer is None, what
        else:
            assert answer is not None and want in answer["error"], (what, answer)
        assert daemon.thread.is_alive(), f"the server died on: {what}"
    assert not daemon.results
    # the server counts an error after it has answered it, so the last one can lag the answer
    end = time.monotonic() + 5
    while len(daemon.errors) < len(HOSTILE) - 1 and time.monotonic() < end:
        time.sleep(0.05)  # polling interval of a deadline-bounded wait
    assert len(daemon.errors) >= len(HOSTILE) - 1
    assert MAX_LINE < 2 << 20


def test_idle_peer_does_not_block_others(tmp_path):
    # a hello_timeout well above the bar, so that "not behind the idle one" has room on a busy machine
    daemon = Daemon(tmp_path, hello_timeout=5.0)
    idle = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        idle.connect(daemon.path)  # says nothing
        t0 = time.monotonic()
        answer = talk(daemon.path, bad(qps=20000), timeout=8)
        assert answer is not None and "'qps'" in answer["error"]
        assert time.monotonic() - t0 < 3.0, "a second client waited behind an idle one"
        # the idle peer is dropped after hello_timeout, with a reason
        idle.settimeout(10)
        line = idle.recv(65536)
        assert b"no bootstrap message within" in line
    finally:
        idle.close()
        daemon.close()


def test_too_many_pending_connections_are_refused(tmp_path):
    d = Daemon(tmp_path, hello_timeout=3.0, max_pending=2)
    socks = []
    try:
        for _ in range(2):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(d.path)
            socks.append(s)
        answer = talk(d.path, bad(qps=1), timeout=5)
        assert answer is not None and "server busy" in answer["error"]
        assert d.thread.is_alive()
    finally:
        for s in socks:
            s.close()
        d.close()


def test_sigterm_removes_the_unix_socket(tmp_path):
    path = tmp_path / "s.sock"
    p = subprocess.Popen([sys.executable, "-m", "mrc.cli", "server", "--ifaces", "lo",
                          "--bootstrap", f"unix:{path}", "--forever"], stderr=subprocess.PIPE, text=True)
    try:
        line = p.stderr.readline()  # "listening on": the socket exists from here on
        assert "listening" in line and path.exists()
        assert talk(str(path), bad(qps=-1))["error"]  # a bad peer first: the daemon lives on
        assert p.poll() is None
        p.send_signal(signal.SIGTERM)
        p.wait(10)
        assert not path.exists(), "SIGTERM left the unix socket file behind"
    finally:
        if p.poll() is None:
            p.kill()
            p.wait(5)
        p.stderr.close()
    assert not os.path.exists(path)
