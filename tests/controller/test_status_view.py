"""``mrc-controller status`` piped into a file keeps its column headers whole.

With stdout no terminal, rich assumed 80 columns and cut the switches table's 10 headers to
"swit…", "conn…", "prim…" (seen running the README's commands with the output in a log).
"""
from __future__ import annotations

import http.server
import os
import subprocess
import sys
import threading

# a real scrape of `mrc-controller run --metrics-port` (two switches of the small fabric), cut down
SCRAPE = "".join(
    f'mrc_switch_{k}{{switch="{s}"}} {v}\n'
    for s in ("p1l1", "p1s1")
    for k, v in (("connected", 1.0), ("up", 1.0), ("primary", 1.0), ("converged", 1.0), ("refused", 0.0),
                 ("desired_entities", 282.0), ("connect_failures_total", 0.0), ("refusals_total", 0.0))
) + 'mrc_link_state{a="p1l1:1",b="p1s1:1",state="up"} 1.0\n' \
    + 'mrc_port_rx_packets_total{port="1",switch="p1l1"} 285.0\n'


class _Metrics(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = SCRAPE.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_status_into_a_pipe_keeps_every_header():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Metrics)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
        r = subprocess.run([sys.executable, "-m", "controller", "status", "--url",
                            f"http://127.0.0.1:{srv.server_address[1]}/metrics"],
                           check=False, capture_output=True, text=True, timeout=60, env=env)
    finally:
        srv.shutdown()
        srv.server_close()
    assert r.returncode == 0, r.stderr
    assert "…" not in r.stdout, r.stdout
    header = next(line for line in r.stdout.splitlines() if "switch" in line and "connected" in line)
    for col in ("connected", "counters", "primary", "converged", "refused", "entities", "writes",
                "connect failures", "refusals"):
        assert col in header, (col, header)
    assert "p1l1" in r.stdout and "p1s1" in r.stdout


def test_watch_replaces_the_view_on_a_terminal_and_keeps_it_when_piped():
    """``--watch`` on a terminal redrew the tables under the last ones every period (a scrolling
    log, not a view); now it clears the screen first.  Piped, nothing is cleared."""
    import io

    from rich.console import Console

    from controller.status import show

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Metrics)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{srv.server_address[1]}/metrics"
    try:
        term, pipe = io.StringIO(), io.StringIO()
        for _ in range(2):
            show(url, Console(file=term, force_terminal=True, width=160), clear=True)
            show(url, Console(file=pipe, force_terminal=False, width=160), clear=True)
    finally:
        srv.shutdown()
        srv.server_close()
    assert term.getvalue().count("\x1b[2J") == 2, "each refresh on a terminal starts with a cleared screen"
    assert "\x1b[" not in pipe.getvalue() and pipe.getvalue().count("p1l1") >= 2


def test_a_backups_empty_links_table_keeps_its_title_on_one_line():
    """A backup controller exports no link series: the links table was empty, 17 columns wide, and its
    title wrapped to "links (wiring" over "check)"."""
    from rich.console import Console

    from controller.status import parse, render

    c = Console(width=120, record=True, color_system=None)
    c.print(render(parse(SCRAPE.replace('mrc_link_state{a="p1l1:1",b="p1s1:1",state="up"} 1.0\n', ""))))
    lines = [ln.strip() for ln in c.export_text().splitlines()]
    for title in ("switches", "links (wiring check)", "drops", "ports"):
        assert title in lines, lines


def test_interrupted_counter_reads_show_beside_the_counter_state_only_when_there_are_some():
    """``mrc_switch_counter_reads_interrupted_total`` (reads cut short by another controller's push)
    was exported but not shown.  It follows the counters cell ("read, 3 interrupted"); at 0 the cell
    stays "read" and the switches table is exactly as wide as before."""
    from rich.console import Console

    from controller.status import parse, render

    def view(scrape: str) -> list[str]:
        c = Console(width=160, record=True, color_system=None)
        c.print(render(parse(scrape)))
        return c.export_text().splitlines()

    zero = SCRAPE + "".join(f'mrc_switch_counter_reads_interrupted_total{{switch="{s}"}} 0.0\n' for s in ("p1l1", "p1s1"))
    some = zero.replace('reads_interrupted_total{switch="p1s1"} 0.0', 'reads_interrupted_total{switch="p1s1"} 3.0')
    some = some.replace('mrc_switch_up{switch="p1s1"} 1.0', 'mrc_switch_up{switch="p1s1"} 0.0')
    base, at0, hit = view(SCRAPE), view(zero), view(some)
    assert at0 == base, "no interrupted read: the view is unchanged"
    row = {}  # each switch's first row: the switches table's (the ports table comes later)
    for ln in hit:
        if ln.split()[1:2] in (["p1l1"], ["p1s1"]):
            row.setdefault(ln.split()[1], ln)
    assert "stale, 3 interrupted" in row["p1s1"], hit
    assert "interrupted" not in row["p1l1"] and " read " in row["p1l1"], hit


def test_status_pointed_at_something_else_says_so():
    """Another exporter's metrics (node_exporter's port, say) or an empty page printed four empty tables
    and exited 0; an HTML page (the --view-port) echoed the page into the error.  Now exit 2 with one
    line saying what the URL serves."""
    pages = {"/node": b"# HELP node_load1 x\n# TYPE node_load1 gauge\nnode_load1 0.5\n", "/empty": b"",
             "/view": b"<html><body>" + b"x" * 200 + b"</body></html>\n", "/mrc": SCRAPE.encode()}

    class _Pages(_Metrics):
        def do_GET(self):
            body = pages[self.path]
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    try:
        runs = {p: subprocess.run([sys.executable, "-m", "controller", "status", "--url", base + p], check=False,
                                  capture_output=True, text=True, timeout=60) for p in pages}
    finally:
        srv.shutdown()
        srv.server_close()
    for p in ("/node", "/empty"):
        assert runs[p].returncode == 2 and runs[p].stdout == ""
        assert runs[p].stderr == (f"mrc-controller: error: {base}{p}: serves no mrc-controller metrics (no mrc_* "
                                  "series) (want the metrics URL of `mrc-controller run --metrics-port`)\n")
    view = runs["/view"]
    assert view.returncode == 2 and view.stdout == "" and view.stderr.count("\n") == 1
    assert "not Prometheus metrics text (invalid metric name:<html><body>xxx" in view.stderr
    assert "x" * 100 not in view.stderr  # the page is cut, not echoed
    assert runs["/mrc"].returncode == 0 and "p1l1" in runs["/mrc"].stdout


def test_a_metrics_port_nothing_listens_on_is_named_plainly(capsys):
    """"cannot read URL: <urlopen error [Errno 111] Connection refused>" was urllib's wrapping."""
    import socket

    from controller.cli import main

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    assert main(["status", "--metrics-port", str(port)]) == 2
    assert capsys.readouterr().err == (f"mrc-controller: error: cannot read http://127.0.0.1:{port}/metrics: "
                                       "Connection refused (is `mrc-controller run --metrics-port` running?)\n")
