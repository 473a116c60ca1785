"""mrc-perf client edges found in a user's audit (2026-12-06):

* messages go round robin over the QPs: with ``--qps 3 --iters 30`` (default ``--tx-depth 16``) the
  client used to give QP 0 16 messages, QP 1 14 and QP 2 none, and the server's ``--verify`` then
  failed the run ("MISMATCH on QP index [2]") although every message arrived;
* progress lines count bytes, not packets x MTU: 100-byte messages reported 100% after a third of them;
* a server that goes away mid-run (Ctrl-C) is noticed on the bootstrap connection at once: the client
  used to go on until its QP gave up (17 s on the fabric) and then exited 2 ("bad arguments or setup",
  "bootstrap peer gone: Broken pipe") without a report.
"""
from __future__ import annotations

import json
import signal
import subprocess
import time

import pytest

from mrc.endpoint.perf import PerfError, PerfParams, acked_bytes


def test_acked_bytes_counts_payload_not_packets_times_mtu():
    assert acked_bytes(0, 100, 8192) == 0
    assert acked_bytes(7, 100, 8192) == 700  # one packet per message
    assert acked_bytes(1, 4097, 4096) == 4096 and acked_bytes(2, 4097, 4096) == 4097
    assert acked_bytes(3, 4097, 4096) == 4097 + 4096
    assert acked_bytes(4, 8192, 4096) == 8192 * 2


def test_fewer_messages_than_qps_is_refused_up_front():
    with pytest.raises(PerfError, match="--iters 2 is less than --qps 4"):
        PerfParams(iters=2, qps=4).check()
    PerfParams(iters=4, qps=4).check()
    PerfParams(iters=0, duration=1.0, qps=4).check()


def test_a_duration_that_is_not_a_number_of_seconds_is_refused():
    """mrc-perf client --duration -3 ran the default 1,000 messages and said nothing, --duration nan
    reported 0 bytes in 0 s with exit 0, --duration inf ended in an OverflowError traceback after the
    bootstrap; --timeout nan passed the 'positive' check."""
    for bad in (-3.0, float("nan"), float("inf"), 1e12):
        with pytest.raises(PerfError, match="--duration must be 0"):
            PerfParams(duration=bad).check()
    with pytest.raises(PerfError, match="--timeout must be positive"):
        PerfParams(timeout=float("nan")).check()
    PerfParams(duration=0.0).check()
    PerfParams(duration=3600.0).check()


def test_a_progress_period_that_is_not_zero_or_seconds_is_refused():
    """--progress -1 silently meant "no progress lines" (the help says 0 does)."""
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(PerfError, match="--progress must be 0"):
            PerfParams(progress=bad).check()
    PerfParams(progress=0.0).check()
    PerfParams(progress=0.5).check()


def _client(link, sock, *args):
    return link.popen("a", "client", "--ifaces", link.ifaces("a"), "--peer", sock, "--json", "--timeout", "60", *args)


def _server(link, sock):
    return link.popen("b", "server", "--ifaces", link.ifaces("b"), "--bootstrap", sock, "--json",
                      "--accept-timeout", "30")


@pytest.mark.root
def test_messages_round_robin_over_qps_and_progress_counts_bytes(direct_link, procs, tmp_path):
    link = direct_link("q", planes=2)
    sock = f"unix:{tmp_path / 'boot.sock'}"
    procs.append(server := _server(link, sock))
    procs.append(client := _client(link, sock, "--qps", "3", "--iters", "30", "--size", "64K", "--verify",
                                   "--progress", "0"))
    out, err = client.communicate(timeout=90)
    server.communicate(timeout=30)
    assert client.returncode == 0, err[-2000:]
    r = json.loads(out)
    assert r["ok"] and r["server"]["verify"] == "ok"
    assert [q["data_packets_sent"] for q in r["counters"]["qps"].values()] == [80, 80, 80]  # 10 messages x 8

    procs.append(server := _server(link, sock))
    procs.append(client := _client(link, sock, "--size", "100", "--iters", "1500", "--tx-depth", "1",
                                   "--progress", "0.1"))
    out, err = client.communicate(timeout=90)
    server.communicate(timeout=30)
    assert client.returncode == 0, err[-2000:]
    lines = [json.loads(ln)["progress"] for ln in err.splitlines() if ln.startswith('{"progress"')]
    assert lines, err[-2000:]
    for p in lines:  # with one message in flight, at most one more acknowledged than completed
        assert p["messages_done"] * 100 <= p["acked_bytes"] <= (p["messages_done"] + 1) * 100, p


@pytest.mark.root
def test_client_notices_at_once_that_the_server_went_away(direct_link, procs, tmp_path):
    link = direct_link("k", planes=2)
    sock = f"unix:{tmp_path / 'boot.sock'}"
    procs.append(server := _server(link, sock))
    procs.append(client := _client(link, sock, "--size", "1M", "--iters", "200", "--rate-gbps", "0.05",
                                   "--verify", "--progress", "0.1"))
    deadline = time.monotonic() + 30
    line = ""
    while '"progress"' not in line and time.monotonic() < deadline:  # the writes have started
        line = client.stderr.readline()
    assert '"progress"' in line
    # the server's Python is the child of `ip netns exec`, which execs it: same PID
    server.send_signal(signal.SIGINT)
    assert server.wait(timeout=10) == 130
    t0 = time.monotonic()
    try:
        out, err = client.communicate(timeout=8)
    except subprocess.TimeoutExpired:
        pytest.fail("the client did not notice within 8 s that its server had gone")
    assert time.monotonic() - t0 < 8
    assert client.returncode == 1, err[-2000:]
    r = json.loads(out)
    assert r["ok"] is False and r["server"] == {}
    assert any("the server ended the session" in e for e in r["errors"]), r["errors"]


@pytest.mark.root
def test_a_client_queued_behind_another_session_waits_for_it(direct_link, procs, tmp_path):
    """`--forever` runs one session at a time: a second client is told it is queued and waits (up to its
    --timeout). It used to wait 30 s for the server's 'accept' and then fail, exit 2, with "no
    bootstrap message within 30 s" (seen on the fabric behind a 43 s session)."""
    link = direct_link("w", planes=2)
    sock = f"unix:{tmp_path / 'boot.sock'}"
    procs.append(server := link.popen("b", "server", "--ifaces", link.ifaces("b"), "--bootstrap", sock,
                                      "--forever", "--json"))
    deadline = time.monotonic() + 10
    while not (tmp_path / "boot.sock").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    procs.append(a := _client(link, sock, "--size", "1M", "--iters", "40", "--rate-gbps", "0.05", "--verify",
                              "--progress", "0.1"))
    line = ""
    while '"progress"' not in line and time.monotonic() < deadline + 20:  # A's session is running
        line = a.stderr.readline()
    assert '"progress"' in line
    procs.append(b := _client(link, sock, "--size", "64K", "--iters", "10", "--verify", "--progress", "0"))
    b_out, b_err = b.communicate(timeout=90)
    _, a_err = a.communicate(timeout=90)
    assert a.returncode == 0, a_err[-2000:]
    assert b.returncode == 0, b_err[-2000:]
    notes = [json.loads(ln)["note"] for ln in b_err.splitlines() if ln.startswith('{"note"')]
    assert notes and notes[0].startswith("queued:"), b_err[-2000:]
    assert json.loads(b_out)["server"]["verify"] == "ok"
    server.send_signal(signal.SIGTERM)
    assert server.wait(timeout=10) == 130


@pytest.mark.root
@pytest.mark.slow
def test_a_failed_rc_run_counts_only_completed_messages_for_the_immediates(direct_link, procs, tmp_path):
    """RC with --imm, its one path blackholed mid-run (the receiving end's MTU shrunk): the QP fails (RETRY_EXC_ERR, the rest flushed). The
    client told the server every completion, flushed ones included, so the server reported
    "imm MISMATCH: 10 immediates for 26 messages" when 10 messages had completed and 10 immediates
    had arrived (seen on the fabric); it now counts the messages that completed."""
    link = direct_link("m", planes=2)
    sock = f"unix:{tmp_path / 'boot.sock'}"
    procs.append(server := _server(link, sock))
    procs.append(client := _client(link, sock, "--mode", "rc", "--imm", "--size", "256K", "--iters", "40",
                                   "--rate-gbps", "0.02", "--verify", "--progress", "0.1"))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # a few messages done, then cut the RC QP's path (plane 1)
        line = client.stderr.readline()
        if '"progress"' in line and json.loads(line)["progress"]["messages_done"] >= 3:
            break
    from pyroute2 import NetNS

    with NetNS(link.ns["b"]) as n:  # a dead path, not a down port (an RC QP waits for its port to return)
        n.link("set", index=n.link_lookup(ifname=link.ifname("b", 1))[0], mtu=1500)
    out, err = client.communicate(timeout=90)
    server.communicate(timeout=30)
    assert client.returncode == 1, err[-2000:]
    r = json.loads(out)
    done, s = r["results"]["messages"], r["server"]
    assert 3 <= done < 40 and any("RETRY_EXC_ERR" in e for e in r["errors"]), r["errors"][:3]
    assert s["imm"] == "ok" or f"for {done} messages" in s["imm"], (s["imm"], done)
