"""Runtime control channel: JSON lines over TCP, the analogue of bmv2's Thrift port.

Request  ``{"cmd": "set_queue_depth", "args": [16, 2]}``  →  reply ``{"ok": true, "result": ...}``
or ``{"ok": false, "error": "..."}``.  Commands mirror ``simple_switch_CLI``: ``set_queue_depth
DEPTH [PORT [PRIORITY]]``, ``set_queue_rate PPS [PORT [PRIORITY]]``, plus ``set_link_rate PPS [PORT]``
(frames/s shared by the port's priority queues), ``set_link_bps BPS [PORT]`` (bits/s shared by them,
charged per byte), ``set_link_delay US [PORT]``, ``port_stats [PORT]``,
``show_ports``, ``switch_stats``.
"""
from __future__ import annotations

import json
import logging
import socket
import socketserver
import threading
from collections.abc import Callable
from dataclasses import asdict

from softswitch.contract import DROP_PORT
from softswitch.engine.loop import PacketLoop

log = logging.getLogger("softswitch.control")
MAX_LINE = 65536


class ControlError(Exception):
    """A runtime control command was malformed or failed."""


# The range of every numeric argument (until 2026-12-08 any int() was taken: `set_link_delay 1 -5`
# made a port -5, `set_queue_depth 4 1000` a port 1000 beside the 511 v1model has, '1_000' and '\u0663'
# read as numbers, a JSON 1.9 as 1).  DEPTH is bmv2's Thrift i32 and the rates its i64; a delay of
# more than about 71 minutes is no delay a link has.  Ports are 0..510 (511 is the drop port).
I32_MAX, I64_MAX = 2**31 - 1, 2**63 - 1
ARG_RANGES = {"DEPTH_PKTS": (0, I32_MAX), "RATE_PPS": (0, I64_MAX), "BITS_PER_S": (0, I64_MAX),
              "DELAY_US": (0, 2**32 - 1), "PORT": (0, DROP_PORT - 1), "PRIORITY": (0, 7)}
# command -> (argument names, how many are required); the optional ones follow in order
COMMAND_ARGS: dict[str, tuple[tuple[str, ...], int]] = {
    "set_queue_depth": (("DEPTH_PKTS", "PORT", "PRIORITY"), 1),
    "set_queue_rate": (("RATE_PPS", "PORT", "PRIORITY"), 1),
    "set_link_rate": (("RATE_PPS", "PORT"), 1),
    "set_link_bps": (("BITS_PER_S", "PORT"), 1),
    "set_link_delay": (("DELAY_US", "PORT"), 1),
    "port_stats": (("PORT",), 0),
    "show_ports": ((), 0),
    "switch_stats": ((), 0),
}


def strict_int(text: str) -> int:
    """ASCII decimal digits with an optional '-'; ValueError otherwise (int() also took '1_000', ' 5'
    and '\u0663'): the switch's command line and its runtime commands read numbers alike."""
    digits = text.removeprefix("-")
    if not (digits.isascii() and digits.isdigit()):
        raise ValueError(text)
    return int(text)


def command_usage(cmd: str) -> str:
    """``set_queue_depth DEPTH_PKTS [PORT [PRIORITY]]``."""
    names, required = COMMAND_ARGS[cmd]
    text = " ".join(names[:required])
    opt = ""
    for name in reversed(names[required:]):
        opt = f"[{name}{' ' + opt if opt else ''}]"
    return " ".join(x for x in (cmd, text, opt) if x)


def check_args(cmd: str, args: list) -> list[int]:
    """The integers of a known command's arguments, each in its range; ControlError (one line, with the
    command's usage) otherwise.  Text must be ASCII decimal digits with an optional '-'; a JSON bool
    or float is refused, not truncated."""
    names, required = COMMAND_ARGS[cmd]
    usage = f"usage: {command_usage(cmd)}"
    if not required <= len(args) <= len(names):
        raise ControlError(f"{cmd}: takes {_count(required, len(names))}, got {len(args)} ({usage})")
    out = []
    for name, a in zip(names, args):
        if isinstance(a, int) and not isinstance(a, bool):
            v = a
        elif isinstance(a, str):
            try:
                v = strict_int(a)
            except ValueError:
                raise ControlError(f"{cmd}: {name} '{a}' is not an integer ({usage})") from None
        else:
            raise ControlError(f"{cmd}: {name} {a!r} is not an integer ({usage})")
        lo, hi = ARG_RANGES[name]
        if not lo <= v <= hi:
            raise ControlError(f"{cmd}: {name} {v} is out of range {lo}..{hi} ({usage})")
        out.append(v)
    return out


def _count(lo: int, hi: int) -> str:
    n = f"{lo}" if lo == hi else f"{lo} to {hi}"
    return f"{n} argument{'' if hi == 1 else 's'}"


class ControlHandler:
    """Executes control commands on the packet loop's thread."""

    def __init__(self, loop: PacketLoop) -> None:
        self.loop = loop
        self.commands: dict[str, Callable[[list], object]] = {
            "set_queue_depth": self._set_queue_depth,
            "set_queue_rate": self._set_queue_rate,
            "set_link_rate": self._set_link_rate,
            "set_link_bps": self._set_link_bps,
            "set_link_delay": self._set_link_delay,
            "port_stats": self._port_stats,
            "show_ports": self._show_ports,
            "switch_stats": self._switch_stats,
        }

    def execute(self, cmd: str, args: list) -> object:
        """Run one command; raises ControlError with a message for the user."""
        fn = self.commands.get(cmd)
        if fn is None:
            raise ControlError(f"unknown command '{cmd}'; known: {', '.join(sorted(self.commands))}")
        try:
            return self.loop.call(lambda: fn(args))
        except ValueError as e:
            raise ControlError(str(e)) from None

    def _set_queue_depth(self, args: list) -> None:
        v = check_args("set_queue_depth", args)
        self.loop.tm.set_queue_depth(*v)

    def _set_queue_rate(self, args: list) -> None:
        v = check_args("set_queue_rate", args)
        self.loop.tm.set_queue_rate(*v)

    def _set_link_rate(self, args: list) -> None:
        v = check_args("set_link_rate", args)
        self.loop.tm.set_link_rate(*v)

    def _set_link_bps(self, args: list) -> None:
        v = check_args("set_link_bps", args)
        self.loop.tm.set_link_bps(*v)

    def _set_link_delay(self, args: list) -> None:
        v = check_args("set_link_delay", args)
        self.loop.tm.set_link_delay(*v)

    def _port_stats(self, args: list) -> list[dict]:
        v = check_args("port_stats", args)
        rows = self.loop.port_stats()
        if not v:
            return rows
        picked = [r for r in rows if r["port"] == v[0]]
        if not picked:  # an empty answer read as "all counters 0" (or as a switch that did not answer)
            bound = ", ".join(str(r["port"]) for r in rows) or "none"
            raise ValueError(f"port_stats: no port {v[0]} on this switch (ports: {bound})")
        return picked

    def _show_ports(self, args: list) -> list[dict]:
        check_args("show_ports", args)
        return [{"port": p.number, "ifname": p.ifname, "up": p.up}
                for p in sorted(self.loop.ports.values(), key=lambda p: p.number)]

    def _switch_stats(self, args: list) -> dict:
        check_args("switch_stats", args)
        return asdict(self.loop.counters)


class ControlServer:
    """A threaded TCP server answering JSON-line requests with a ControlHandler."""

    def __init__(self, handler: ControlHandler, host: str, port: int) -> None:
        execute = handler.execute

        class _Req(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                # at most MAX_LINE bytes are read per request: iterating the file read a line whole
                # before its length was checked, so a client that sent no newline grew the switch
                # without bound (200 MiB in, 206 MB more RSS)
                while raw := self.rfile.readline(MAX_LINE + 1):
                    if len(raw) > MAX_LINE and not raw.endswith(b"\n"):
                        self.wfile.write(json.dumps({"ok": False, "error": f"request longer than "
                                                     f"{MAX_LINE} bytes"}).encode() + b"\n")
                        return  # the rest of that line cannot be told from a next request: close
                    self.wfile.write(json.dumps(_answer(execute, raw)).encode() + b"\n")

        class _Srv(socketserver.ThreadingTCPServer):
            allow_reuse_address = True
            daemon_threads = True
            address_family = socket.AF_INET6 if ":" in host else socket.AF_INET

        self._server = _Srv((host, port), _Req)
        self.address = self._server.server_address[:2]
        self._thread = threading.Thread(target=self._server.serve_forever, name="softswitch-control",
                                        daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def _answer(execute: Callable[[str, list], object], raw: bytes) -> dict:
    try:
        req = json.loads(raw)
        if not isinstance(req, dict) or not isinstance(req.get("cmd"), str):
            raise ControlError('request must be a JSON object {"cmd": NAME, "args": [...]}')
        args = req.get("args", [])
        if not isinstance(args, list):
            raise ControlError("args must be a list")
        return {"ok": True, "result": execute(req["cmd"], args)}
    except json.JSONDecodeError as e:
        return {"ok": False, "error": f"bad JSON: {e}"}
    except ControlError as e:
        return {"ok": False, "error": str(e)}
    except Exception as e:  # never kill the connection thread on a bug
        log.exception("control command failed")
        return {"ok": False, "error": f"internal error: {e}"}


def send_command(addr: str, cmd: str, args: list, timeout: float = 5.0) -> object:
    """Client side: send one command to ``HOST:PORT`` and return its result (ControlError on failure)."""
    host, port = split_addr(addr)
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(json.dumps({"cmd": cmd, "args": args}).encode() + b"\n")
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    if not buf:
        raise ControlError(f"{addr}: connection closed without a reply")
    try:
        reply = json.loads(buf)
    except ValueError:  # a codec error of json.loads: 'utf-32-be' codec can't decode ...
        reply = None
    if not isinstance(reply, dict):  # the gRPC port, say: its HTTP/2 frames read as a codec error
        raise ControlError(f"{addr} answered something other than softswitch runtime control (JSON lines): "
                           "is it the switch's --runtime-addr, not its gRPC port?")
    if not reply.get("ok"):
        raise ControlError(reply.get("error", "unknown error"))
    return reply.get("result")


class AddressError(ValueError):
    """A malformed ``HOST:PORT``; ``reason`` says what is wrong (``expected HOST:PORT``, ...)."""

    def __init__(self, addr: str, reason: str):
        super().__init__(f"bad address '{addr}': {reason}")
        self.addr, self.reason = addr, reason


def split_addr(addr: str, default_host: str | None = "0.0.0.0") -> tuple[str, int]:
    """``HOST:PORT`` or ``[V6]:PORT`` → (host, port); ``:PORT`` → (``default_host``, port), or an error
    when ``default_host`` is None.  The one parser of softswitch's addresses (``--runtime-addr``,
    ``--grpc-server-addr``, ``softswitch cli --addr``; the command line had its own until 2026-12-07)."""
    host, sep, port = addr.rpartition(":")
    # ASCII digits only: '²'.isdigit() is True but int('²') fails (a ValueError traceback until 2026-12-07)
    if not sep or not (port.isascii() and port.isdigit()) or (default_host is None and not host.strip("[]")):
        raise AddressError(addr, "expected HOST:PORT")
    if int(port) > 65535:  # the client connected to the port modulo 65536 and reported that one refused
        raise AddressError(addr, "port must be 0..65535")
    return host.strip("[]") or str(default_host), int(port)
