"""Out-of-band bootstrap for mrc-perf: one JSON object per line over TCP or a unix socket.

Like perftest's TCP exchange, the client and server swap what RDMA cannot tell them: GIDs, QPNs,
start PSNs, port MACs, and the remote buffer (VA, rkey).  Addresses: ``HOST:PORT``, ``[V6]:PORT``,
``HOST`` (port 18515, perftest's default) or ``unix:PATH`` (works across network namespaces, since
a path-named unix socket lives in the file system, not in a namespace).

Nothing a peer sends can make this side hang or grow: a message is one line of at most
``MAX_LINE`` bytes, every receive has a deadline and every send a timeout (``SEND_TIMEOUT``).
"""

from __future__ import annotations

import json
import os
import select
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

DEFAULT_PORT = 18515
MAX_LINE = 64 << 10  # the largest bootstrap message (a hello with 64 QPs is about 2 KiB)
SEND_TIMEOUT = 10.0  # a peer that does not read its messages for this long is gone
WAIT_NOTE_S = 2.0  # a client still unanswered after this long says once that it is waiting


class BootstrapError(ConnectionError):
    """The out-of-band exchange failed (no server, peer closed, bad message, timeout)."""


@dataclass(frozen=True, slots=True)
class Address:
    """A parsed bootstrap address: ``family`` is ``"unix"`` or ``"tcp"``."""

    family: str
    host: str = ""
    port: int = DEFAULT_PORT
    path: str = ""

    def __str__(self) -> str:
        if self.family == "unix":
            return f"unix:{self.path}"
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def parse_address(text: str) -> Address:
    """``unix:PATH`` | ``HOST[:PORT]`` | ``[V6][:PORT]`` -> Address; ValueError on nonsense."""
    if text.startswith("unix:"):
        if not text[5:]:
            raise ValueError("unix: address needs a path, e.g. unix:/tmp/mrc-perf.sock")
        return Address("unix", path=text[5:])
    host, port = text, DEFAULT_PORT
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            raise ValueError(f"bad address {text!r}: missing ']'")
        host, rest = text[1:end], text[end + 1 :]
        if rest:
            if not rest.startswith(":"):
                raise ValueError(f"bad address {text!r}")
            port = _port(rest[1:], text)
    elif text.count(":") == 1:
        host, p = text.split(":")
        port = _port(p, text)
    if not host:
        raise ValueError(f"bad address {text!r}: no host")
    return Address("tcp", host=host, port=port)


def _port(p: str, text: str) -> int:
    try:
        v = int(p)
    except ValueError:
        raise ValueError(f"bad port in address {text!r}") from None
    if not 0 < v < 65536:
        raise ValueError(f"port out of range in address {text!r}")
    return v


class Channel:
    """A connected JSON-lines channel."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self._buf = b""

    def send(self, obj: dict[str, Any]) -> None:
        try:
            self.sock.settimeout(SEND_TIMEOUT)
            try:
                self.sock.sendall(json.dumps(obj, separators=(",", ":")).encode() + b"\n")
            finally:
                self.sock.settimeout(None)
        except OSError as exc:
            raise BootstrapError(f"bootstrap peer gone: {exc}") from None

    def poll(self, timeout_s: float = 0.0) -> dict[str, Any] | None:
        """One message if a full line arrives within ``timeout_s``; None otherwise."""
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._buf:
            left = max(0.0, deadline - time.monotonic())
            r, _, _ = select.select([self.sock], [], [], left)
            if not r:
                return None
            try:
                chunk = self.sock.recv(65536)
            except OSError as exc:
                raise BootstrapError(f"bootstrap peer gone: {exc}") from None
            if not chunk:
                raise BootstrapError("bootstrap peer closed the connection")
            self._buf += chunk
            if len(self._buf) > MAX_LINE:
                raise BootstrapError(f"bootstrap message longer than {MAX_LINE} bytes")
        line, self._buf = self._buf.split(b"\n", 1)
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            raise BootstrapError("bootstrap message is not JSON") from None
        if not isinstance(obj, dict):
            raise BootstrapError("bootstrap message is not a JSON object")
        if "error" in obj:
            raise BootstrapError(f"peer: {obj['error']}")
        return obj

    def recv(self, timeout_s: float) -> dict[str, Any]:
        """The next message; BootstrapError on timeout."""
        m = self.poll(timeout_s)
        if m is None:
            raise BootstrapError(f"no bootstrap message within {timeout_s:g} s")
        return m

    def close(self) -> None:
        self.sock.close()


class Listener:
    """A listening bootstrap socket (unix sockets are unlinked on close)."""

    def __init__(self, addr: Address):
        self.addr = addr
        if addr.family == "unix":
            if os.path.exists(addr.path):
                os.unlink(addr.path)
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            target: Any = addr.path
        else:
            try:
                infos = socket.getaddrinfo(addr.host, addr.port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
            except OSError as exc:  # socket.gaierror: 'garbage' was a traceback from mrc-perf server
                raise BootstrapError(f"cannot listen on {addr}: {exc.strerror or exc}") from None
            fam, _, _, _, target = infos[0]
            self.sock = socket.socket(fam, socket.SOCK_STREAM)
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.sock.bind(target)
            self.sock.listen(16)
        except OSError as exc:
            self.sock.close()
            raise BootstrapError(f"cannot listen on {addr}: {exc.strerror or exc}") from None

    def accept(self, timeout_s: float | None) -> Channel | None:
        """A client channel, or None after ``timeout_s`` (None: wait forever)."""
        r, _, _ = select.select([self.sock], [], [], timeout_s)
        if not r:
            return None
        try:
            conn, _ = self.sock.accept()
        except OSError:  # the peer gave up between select and accept
            return None
        return Channel(conn)

    def close(self) -> None:
        self.sock.close()
        if self.addr.family == "unix":
            try:
                os.unlink(self.addr.path)
            except OSError:
                pass


def connect(addr: Address, timeout_s: float = 10.0, on_wait: Callable[[str], None] | None = None,
            wait_note_s: float = WAIT_NOTE_S) -> Channel:
    """Connect to a server, retrying until ``timeout_s`` (the server may still be starting).  If nothing
    has answered after ``wait_note_s``, ``on_wait`` hears it once (the wait was silent until 2026-12-07)."""
    start = time.monotonic()
    deadline = start + timeout_s
    note_at = start + wait_note_s if on_wait is not None and wait_note_s < timeout_s else None
    last: Exception | None = None
    while time.monotonic() < deadline:
        if note_at is not None and time.monotonic() >= note_at:
            note_at = None
            on_wait(f"waiting for the server at {addr} (nothing answers yet: {last}; "
                    f"giving up after {timeout_s:g} s)")
        try:
            if addr.family == "unix":
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                target: Any = addr.path
            else:
                fam, _, _, _, target = socket.getaddrinfo(addr.host, addr.port, type=socket.SOCK_STREAM)[0]
                s = socket.socket(fam, socket.SOCK_STREAM)
            # a peer that drops the SYN blocks connect(): before the note is due, wait only until then
            until = deadline if note_at is None else min(deadline, note_at)
            s.settimeout(max(0.1, until - time.monotonic()))
            try:
                s.connect(target)
            except OSError:
                s.close()
                raise
            s.settimeout(None)
            return Channel(s)
        except socket.gaierror as exc:
            if exc.errno != socket.EAI_AGAIN:  # a name that does not resolve will not start resolving
                raise BootstrapError(f"cannot reach the mrc-perf server at {addr}: {exc.strerror or exc}") from None
            last = exc
            time.sleep(0.05)
        except OSError as exc:
            last = exc
            time.sleep(0.05)  # retry pacing while the server starts, not synchronisation
    raise BootstrapError(f"cannot reach the mrc-perf server at {addr}: {last}")
