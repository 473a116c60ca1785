"""Acceptance over veth: mrc-perf server/client in two namespaces joined by one veth pair per plane.

64 MiB RDMA WRITE verified byte for byte with one plane's link taken down mid-transfer; a
WRITE_WITH_IMM run; the single-path RC baseline over the same links.
"""
from __future__ import annotations

import json
import threading
import time

import pytest

pytestmark = [pytest.mark.root, pytest.mark.slow]

MiB = 1 << 20


def wait_for(pred, timeout_s: float, step_s: float = 0.02) -> bool:
    """Poll ``pred`` until true or the deadline (no fixed sleeps as synchronisation)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(step_s)
    return bool(pred())


class _Lines:
    """Collect a pipe's lines in a thread (so the test can poll them with a deadline)."""

    def __init__(self, pipe):
        self.lines: list[str] = []
        self._t = threading.Thread(target=self._run, args=(pipe,), daemon=True)
        self._t.start()

    def _run(self, pipe):
        for line in pipe:
            self.lines.append(line)

    def join(self, timeout: float) -> None:
        self._t.join(timeout)


def _run_pair(link, procs, tmp_path, server_args=(), client_args=(), during=None, timeout=90):
    """Start a server in ns b and a client in ns a; ``during(progress_lines)`` runs while they work."""
    sock = f"unix:{tmp_path / 'boot.sock'}"
    server = link.popen("b", "server", "--ifaces", link.ifaces("b"), "--bootstrap", sock, "--json",
                        "--accept-timeout", "30", *server_args)
    procs.append(server)
    client = link.popen("a", "client", "--ifaces", link.ifaces("a"), "--peer", sock, "--json",
                        "--timeout", str(timeout), *client_args)
    procs.append(client)
    err, std = _Lines(client.stderr), _Lines(client.stdout)  # one reader per pipe, no communicate()
    if during is not None:
        during(err.lines)
    client.wait(timeout=timeout + 30)
    err.join(10)
    std.join(10)
    out = "".join(std.lines)
    s_out, s_err = server.communicate(timeout=30)
    assert client.returncode == 0, f"client failed ({client.returncode}): {''.join(err.lines)[-3000:]}\n{out[-3000:]}"
    assert server.returncode == 0, f"server failed ({server.returncode}): {s_err[-3000:]}"
    return json.loads(out), json.loads(s_out), err.lines


def _progress(lines: list[str]) -> list[dict]:
    out = []
    for ln in list(lines):
        try:
            d = json.loads(ln)
        except ValueError:
            continue
        if "progress" in d:
            out.append(d["progress"])
    return out


def test_64mib_write_survives_plane_down(direct_link, procs, tmp_path):
    """The write completes, every byte lands once, the downed plane's EVs go ASSUMED_BAD."""
    link = direct_link("d", planes=2)
    marks: dict = {}

    def take_plane_down(lines):
        # wait until a fifth of the write is acknowledged, then cut plane 2 from the client side
        assert wait_for(lambda: any(p["fraction"] >= 0.2 for p in _progress(lines)), 30), \
            f"no progress: {''.join(lines)[-2000:]}"
        marks["fraction_at_cut"] = max(p["fraction"] for p in _progress(lines))
        link.set_up("a", 2, False)
        marks["cut"] = time.monotonic()

    t0 = time.monotonic()
    c, s, _ = _run_pair(link, procs, tmp_path,
                        client_args=("--size", "64M", "--iters", "1", "--verify", "--progress", "0.05",
                                     "--rate-gbps", "0.25"),
                        during=take_plane_down)
    wall = time.monotonic() - t0
    assert marks["fraction_at_cut"] < 0.9, "the link went down too late to be mid-transfer"
    assert c["ok"] and c["errors"] == []
    assert c["results"]["messages"] == 1 and c["results"]["bytes"] == 64 * MiB
    # byte for byte, no duplicate placement
    assert s["verify"] == "ok"
    assert s["bytes_placed"] == 64 * MiB
    # the client saw its port 2 go down before the write completed ...
    downs = [e for e in c["link_events"] if e["port"] == 2 and e["state"] == "down"]
    assert downs and downs[0]["t_s"] < c["results"]["seconds"] + 0.05
    # ... and every EV on port 2 went ASSUMED_BAD (and stays so: the link is still down)
    qp = next(iter(c["counters"]["qps"].values()))
    n_ev = len(qp["ev_states"])
    port2 = [i for i in range(n_ev) if i % 2 == 1]  # direct EVs alternate ports 1, 2, 1, 2
    bad = {(e["ev"]) for e in c["ev_timeline"] if e["to"] == "ASSUMED_BAD" and e["port"] == 2}
    assert set(port2) <= bad
    # each change carries its evidence (--json): the carrier loss names the port
    for e in c["ev_timeline"]:
        if e["cause"] == "port_down":
            assert e["evidence"]["rule"] == "port_down" and e["evidence"]["port"] == 2, e
    assert all(qp["ev_states"][i] == "ASSUMED_BAD" for i in port2)
    assert any(qp["ev_states"][i] == "GOOD" for i in range(n_ev) if i not in port2)
    # the server heard about it too (its own carrier and/or our PORT_STATUS)
    s_qp = next(iter(s["counters"]["qps"].values()))
    assert all(s_qp["ev_states"][i] == "ASSUMED_BAD" for i in port2)
    assert c["counters"]["ports"]["2"]["tx_frames"] > 0 and c["counters"]["ports"]["1"]["tx_frames"] > 0
    print(f"\n64 MiB with plane 2 down at {marks['fraction_at_cut']:.0%}: {c['results']['seconds']:.2f} s "
          f"({c['results']['mb_per_s']:.0f} MB/s), retx {c['retransmissions']}, test wall {wall:.1f} s")


def test_write_with_imm_completions(direct_link, procs, tmp_path):
    """WRITE_WITH_IMM over 2 QPs: one immediate per message at the server, in order per QP."""
    link = direct_link("i", planes=2)
    c, s, _ = _run_pair(link, procs, tmp_path,
                        client_args=("--size", "100K", "--iters", "40", "--qps", "2", "--imm", "--verify",
                                     "--tx-depth", "4", "--progress", "0"))
    assert c["ok"] and c["results"]["messages"] == 40
    assert s["verify"] == "ok"
    assert s["imm_completions"] == 40 and s["imm_in_order"] is True and s["imm"] == "ok"
    assert s["bytes_placed"] == 40 * 100 * 1024


@pytest.mark.parametrize("encap", ["stev", "udp"])
def test_other_encaps_and_rc_baseline(direct_link, procs, tmp_path, encap):
    """STEV/UDP encapsulation sprays over both planes; the RC baseline keeps to one path."""
    link = direct_link("e" if encap == "stev" else "u", planes=2)
    c, s, _ = _run_pair(link, procs, tmp_path, server_args=("--encap", encap),
                        client_args=("--encap", encap, "--size", "4M", "--iters", "2", "--verify", "--progress", "0"))
    assert c["ok"] and s["verify"] == "ok" and s["bytes_placed"] == 8 * MiB
    ports = c["counters"]["ports"]
    assert ports["1"]["tx_frames"] > 100 and ports["2"]["tx_frames"] > 100  # sprayed


def test_rc_baseline_single_path(direct_link, procs, tmp_path):
    link = direct_link("r", planes=2)
    c, s, _ = _run_pair(link, procs, tmp_path,
                        client_args=("--mode", "rc", "--size", "16M", "--iters", "1", "--verify", "--progress", "0"))
    assert c["ok"] and s["verify"] == "ok" and s["bytes_placed"] == 16 * MiB
    ports = c["counters"]["ports"]
    assert ports["1"]["tx_frames"] >= 2048 and ports["2"]["tx_frames"] == 0  # one path only
    assert c["retransmissions"]["rack"] == 0 and c["retransmissions"]["trim"] == 0


def test_silent_blackhole_detected_by_loss(direct_link, procs, tmp_path):
    """Plane 2 silently drops data (its receiving end's MTU shrinks to 1500: veth drops the 8 KiB
    frames, carrier stays up, small ACKs and probes still pass): the sender's loss detection, not a
    link event, retires the EVs, and the write still completes intact."""
    from pyroute2 import NetNS

    link = direct_link("h", planes=2)

    def blackhole(lines):
        assert wait_for(lambda: any(p["fraction"] >= 0.2 for p in _progress(lines)), 30)
        with NetNS(link.ns["b"]) as n:
            n.link("set", index=n.link_lookup(ifname=link.ifname("b", 2))[0], mtu=1500)

    c, s, _ = _run_pair(link, procs, tmp_path,
                        client_args=("--size", "32M", "--iters", "1", "--verify", "--progress", "0.05",
                                     "--rate-gbps", "0.25"),
                        during=blackhole)
    assert c["ok"] and s["verify"] == "ok" and s["bytes_placed"] == 32 * MiB
    assert c["link_events"] == []  # nothing announced it
    assert c["retransmissions"]["total"] > 0
    causes = {e["cause"] for e in c["ev_timeline"] if e["port"] == 2 and e["to"] == "ASSUMED_BAD"}
    assert causes and causes <= {"rack", "timeout"}
    # why: RACK verdicts on the lost packets, each naming one (loss on plane 2 only: plane 1 delivered after it)
    for e in c["ev_timeline"]:
        if e["port"] == 2 and e["to"] == "ASSUMED_BAD":
            ev = e["evidence"]
            assert ev["rule"] in ("fifo", "quiet"), e
            loss = ev if ev["rule"] == "fifo" else ev["suspicion"]
            assert isinstance(loss["psn"], int) and loss["sent_ago_ns"] > 0 and loss["srtt_ns"] > 0, e
    print(f"\nsilent plane loss: {c['results']['seconds']:.2f} s, retx {c['retransmissions']}, "
          f"{len(c['ev_timeline'])} EV changes")
