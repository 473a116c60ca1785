"""HTTP server of the live view: the static page from the package and ``/api/state`` (JSON).

Standard library only (``http.server``), one thread per request, bound to loopback by default.
"""
from __future__ import annotations

import json
import logging
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any

from .state import ViewState

STATIC = {"/": ("index.html", "text/html; charset=utf-8"),
          "/index.html": ("index.html", "text/html; charset=utf-8"),
          "/view.js": ("view.js", "text/javascript; charset=utf-8"),
          "/view.css": ("view.css", "text/css; charset=utf-8")}


def _static(name: str) -> bytes:
    return resources.files(__package__).joinpath("static", name).read_bytes()


class ViewServer(ThreadingHTTPServer):
    """Serves the page and the state API for one ``ViewState``."""

    daemon_threads = True

    def __init__(self, addr: tuple[str, int], view: ViewState, log: logging.Logger | None = None) -> None:
        self.view = view
        self.log = log or logging.getLogger("controller.web")
        super().__init__(addr, _Handler)
        self.thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/"

    def start(self) -> ViewServer:
        """Serve on a daemon thread; ``shutdown()`` stops it."""
        self.thread = threading.Thread(target=self.serve_forever, name="view-http", daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self.shutdown()
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    server: ViewServer

    def do_HEAD(self) -> None:
        """As GET without the body: `curl -I` and HEAD probes got 501 "Unsupported method"."""
        self._head_only = True
        try:
            self.do_GET()
        finally:
            self._head_only = False  # a kept-alive connection's next GET gets its body

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path == "/api/state":
            try:
                self._send(HTTPStatus.OK, json.dumps(self.server.view.document()).encode(), "application/json")
            except Exception as e:  # noqa: BLE001 - the page shows the error; the controller keeps running
                self.server.log.warning("view state failed", extra={"fields": {"error": str(e)}})
                self._send(HTTPStatus.INTERNAL_SERVER_ERROR, json.dumps({"error": str(e)}).encode(),
                           "application/json")
            return
        if path in STATIC:
            name, ctype = STATIC[path]
            self._send(HTTPStatus.OK, _static(name), ctype)
            return
        self._send(HTTPStatus.NOT_FOUND, b"not found\n", "text/plain")

    def _send(self, status: HTTPStatus, body: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if not getattr(self, "_head_only", False):
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        self.server.log.debug("http " + format % args)


def serve_view(controller: Any, port: int, addr: str = "127.0.0.1") -> ViewServer:
    """Start the view of a ``controller.daemon.Controller`` on ``addr:port`` (0 = any free port)."""
    # the view shows no frames lost outside the pipeline: not read at its 250 ms polls
    view = ViewState(controller.plan.topology, lambda: controller.metrics_snapshot(outside_drops=False))
    return ViewServer((addr, port), view).start()
