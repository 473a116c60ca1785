"""Robustness suite (issue 14): hostile P4Runtime clients, malformed frames and hostile bootstrap
peers against a real fabric, then proof that everything still works.

One small fabric (examples/small.yaml, softswitch, every switch under its supervisor) converged by
the controller.  Then, with fixed seeds and bounded loops:

1. >= 1,000 hostile P4Runtime requests at leaf p1l1 (mutated writes as primary, hostile reads,
   wrong device/election/role, garbage pipelines, raw undecodable bytes, stream floods, bad
   PacketOuts).  No request may hang over 5 s, the switch process must stay the same (no crash,
   no supervisor restart) and its RSS may not grow without bound; the controller takes the
   switch back and valid SRv6 packets cross every plane and spine.
2. >= 20,000 malformed frames (derived from valid SRv6 frames) into p1l1 in batches; after each
   batch the switch's port counters show every frame taken in and a valid frame still crosses
   the fabric within 5 s.
3. >= 50 hostile bootstrap sessions against ``mrc-perf server --forever`` in host h3, then an
   ``mrc-perf client --verify`` transfer from h1 through the fabric with every byte verified;
   SIGTERM then removes the server's unix socket.

Needs root; run under the shared lock: ``flock /tmp/mrc-net.lock pytest tests/robustness``.
"""
from __future__ import annotations

import json
import os
import random
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import grpc
import pytest
from google.rpc import status_pb2
from hostile import (
    array_entity,
    bootstrap_sessions,
    garbage_p4info,
    malformed_frames,
    mutate_entity,
    read_entity,
)
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from controller import build_plan, load_topology
from controller.daemon import Controller, Options
from controller.evplan import host_ev_data, srv6_profile, write_ev_files
from mrc_fabric.targets import load_pipeline

pytestmark = pytest.mark.root

REPO = Path(__file__).resolve().parents[2]
TOPO = REPO / "examples" / "small.yaml"
PREFIX = "h14r"
BASE = 21600
SEED = 1414
TARGET_SWITCH = "p1l1"
HANG_S = 5.0
P4RT_REQUESTS = 1100
FRAMES = 20_000
FRAME_BATCH = 250
BOOTSTRAP_SESSIONS = 60
RSS_GROWTH_LIMIT_KIB = 40 << 10  # well under what one unbounded queue grew by (52 MiB for 20,000 probes)
ETH_P_ALL = 3


def _wait(cond, timeout_s: float, step_s: float = 0.05):
    end = time.monotonic() + timeout_s
    while True:  # deadline-bounded poll of another process's state
        v = cond()
        if v or time.monotonic() >= end:
            return v
        time.sleep(step_s)


@pytest.fixture(scope="module")
def fab(tmp_path_factory):
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces, veth, AF_PACKET)")
    from mrc_fabric import Fabric

    state = tmp_path_factory.mktemp("h14r-state")
    with Fabric(load_topology(TOPO), prefix=PREFIX, target="softswitch", grpc_base_port=BASE, state_dir=state,
                topology_path=str(TOPO)) as f:
        yield f


@pytest.fixture(scope="module")
def plan():
    return build_plan(load_topology(TOPO))


@pytest.fixture(scope="module")
def ctl(fab, plan):
    pipeline = load_pipeline("softswitch", os.environ.get("MRC_P4_PROGRAM"))
    c = Controller(plan, pipeline, Options(grpc_base_port=BASE, election_id=10, connect_timeout_s=3.0,
                                           backoff_initial_s=0.3, backoff_max_s=2.0, tick_s=0.1,
                                           wiring_interval_s=3600.0, counters_interval_s=3600.0))
    assert all(c.converge_all().values()), {n: s.last_error for n, s in c.status.items()}
    yield c
    c.close()


def _supervised(fab, name: str) -> dict:
    return fab.status()["switches"][name]["supervisor"]


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for pid {pid}")


def _switch_pids(fab) -> dict[str, int]:
    return {n: _supervised(fab, n)["child_pid"] for n in fab.state.procs}


def _all_alive(fab, pids: dict[str, int]) -> None:
    now = _switch_pids(fab)
    assert now == pids, f"a switch process was replaced (crash + restart): {pids} -> {now}"
    for n in pids:
        sup = _supervised(fab, n)
        assert sup["restarts"] == 0 and sup["state"] == "running", (n, sup)


# ---- raw frames in host namespaces ----------------------------------------------------------------
def _raw(ns: str, ifname: str) -> socket.socket:
    from pyroute2 import netns as pnetns

    pnetns.pushns(ns)
    try:
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    finally:
        pnetns.popns()
    s.bind((ifname, 0))
    return s


def _srv6_frame(plan, src: str, dst: str, ev, tag: bytes) -> bytes:
    from mrc.wire.codec import Encap, encode_data

    hd = host_ev_data(plan, src, formats=("SRV6",))["ports"][ev.port]
    enc = Encap("srv6", plan.sids.host_gid(src).packed, plan.sids.host_gid(dst).packed, ev.value,
                ev_index=ev.index, src_mac=bytes.fromhex(hd["mac"].replace(":", "")),
                dst_mac=bytes.fromhex(hd["leaf_mac"].replace(":", "")))
    return encode_data(enc, 0x0A, 0x12, ev.index, 0x1000, 0x77, len(tag), tag)


def _reset_registers(ctl, switch: str, info) -> None:
    """Write 0 to every cell of every register of ``switch`` (their initial value)."""
    ups = []
    for r in info.registers:
        for i in range(r.size):
            u = p4runtime_pb2.Update(type=p4runtime_pb2.Update.MODIFY)
            u.entity.register_entry.register_id = r.preamble.id
            u.entity.register_entry.index.index = i
            u.entity.register_entry.data.bitstring = b"\x00"
            ups.append(u)
    ctl.sessions[switch].write(ups)


def _arrives(rx: socket.socket, tag: bytes, timeout_s: float) -> bool:
    end = time.monotonic() + timeout_s
    while (left := end - time.monotonic()) > 0:
        if not select.select([rx], [], [], left)[0]:
            continue
        try:
            if tag in rx.recv(16384):
                return True
        except OSError:
            continue
    return False


def _forwards_everywhere(fab, plan, label: str) -> None:
    """A valid SRv6 frame from h1 to h3 crosses every plane and spine (each within HANG_S)."""
    for ev in srv6_profile(plan, "h1", "h3").evs:
        tx, rx = _raw(fab.netns("h1"), f"nic{ev.port}"), _raw(fab.netns("h3"), f"nic{ev.port}")
        try:
            tag = f"{label}-{ev.plane}-{ev.spine}-{time.monotonic_ns()}".encode()
            tx.send(_srv6_frame(plan, "h1", "h3", ev, tag))
            assert _arrives(rx, tag, HANG_S), f"{label}: h1->h3 via {ev.spine} did not arrive within {HANG_S} s"
        finally:
            tx.close()
            rx.close()


# ---- 1. hostile P4Runtime -------------------------------------------------------------------------
class Hostile:
    """Runs hostile requests at one switch, counting outcomes; every call has a HANG_S deadline."""

    def __init__(self, addr: str, device_id: int) -> None:
        self.channel = grpc.insecure_channel(addr, options=[("grpc.max_receive_message_length", 64 << 20)])
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self.dev = device_id
        self.codes: Counter = Counter()
        self.requests = 0
        self.hangs: list[str] = []
        self.internal: list[str] = []

    def call(self, what: str, fn, *args) -> None:
        self.requests += 1
        try:
            out = fn(*args, timeout=HANG_S)
            if hasattr(out, "__next__"):
                for _ in out:
                    pass
            self.codes["OK"] += 1
        except grpc.RpcError as e:
            code = e.code()
            self.codes[code.name] += 1
            if code in (grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.UNAVAILABLE):
                self.hangs.append(f"{what}: {code.name} {e.details()}")
            for k, v in e.trailing_metadata() or ():
                if k == "grpc-status-details-bin":
                    for d in status_pb2.Status.FromString(v).details:
                        err = p4runtime_pb2.Error()
                        d.Unpack(err)
                        if err.canonical_code == 13:  # INTERNAL: a server bug, not a client error
                            self.internal.append(f"{what}: {err.message}")

    def raw(self, method: str, data: bytes) -> None:
        rpc = self.channel.unary_unary(f"/p4.v1.P4Runtime/{method}", request_serializer=None,
                                       response_deserializer=None)
        self.call(f"raw {method}", rpc, data)


def _stream(stub, reqs: list[p4runtime_pb2.StreamMessageRequest], stop: threading.Event):
    def gen():
        yield from reqs
        stop.wait(HANG_S * 4)
    return stub.StreamChannel(gen(), timeout=HANG_S * 4)


def test_hostile_p4runtime_requests(fab, ctl, plan):
    rng = random.Random(SEED)
    pids = _switch_pids(fab)
    pid = pids[TARGET_SWITCH]
    rss0 = _rss_kib(pid)
    dev = plan.switches[TARGET_SWITCH].device_id
    info = ctl.pipeline.p4info
    desired = ctl.desired(TARGET_SWITCH).all()
    h = Hostile(fab.grpc_addr(TARGET_SWITCH), dev)
    # above the controller's id: it took the switch back last time above the highest id it saw, so a
    # fixed id made the test fail when run again in the same module (pytest --count, a rerun)
    eid_hi = p4runtime_pb2.Uint128(high=0, low=max(1_000_000, ctl.sessions[TARGET_SWITCH].election_id + 1000))
    stop = threading.Event()
    # become primary above the controller (a hostile controller can do this): writes get applied
    arb = p4runtime_pb2.StreamMessageRequest()
    arb.arbitration.device_id = dev
    arb.arbitration.election_id.CopyFrom(eid_hi)
    primary_q: list = [arb]
    pkt_outs = []
    for i in range(60):  # bad PacketOuts: unbound ports, out of range, oversized, bad metadata
        po = p4runtime_pb2.StreamMessageRequest()
        # none is a port of the leaf, nor its CPU port (255: a PacketOut may loop back there, as on bmv2)
        port = rng.choice((0, 9, 200, 254, 256, 511))
        po.packet.metadata.add(metadata_id=rng.choice((1, 1, 1, 7)), value=port.to_bytes(2, "big"))
        po.packet.payload = rng.randbytes(rng.choice((0, 14, 64, 70_000)))
        pkt_outs.append(po)
    primary_q += pkt_outs
    primary = _stream(h.stub, primary_q, stop)
    responses: list = []
    def read_primary() -> None:
        try:
            for m in primary:
                responses.append(m)  # noqa: PERF402 - the list is read while it grows
        except grpc.RpcError:
            pass  # cancelled at the end

    reader = threading.Thread(target=read_primary, daemon=True)
    reader.start()
    try:
        assert _wait(lambda: any(m.HasField("arbitration") and m.arbitration.status.code == 0 for m in responses), 5)
        h.requests += len(primary_q)
        eid = eid_hi
        for i in range(P4RT_REQUESTS):
            r = rng.randrange(100)
            if r < 45:  # mutated writes, 1..20 updates, as the primary
                req = p4runtime_pb2.WriteRequest(device_id=dev, election_id=eid)
                for _ in range(rng.randint(1, 20)):
                    u = req.updates.add(type=rng.choice((1, 1, 2, 3, 0)))
                    u.entity.CopyFrom(mutate_entity(rng, rng.choice(desired), info) if rng.random() < 0.8
                                      else array_entity(rng, info))
                h.call("write", h.stub.Write, req)
            elif r < 65:  # reads
                req = p4runtime_pb2.ReadRequest(device_id=dev)
                for _ in range(rng.randint(1, 4)):
                    req.entities.add().CopyFrom(read_entity(rng, info))
                h.call("read", h.stub.Read, req)
            elif r < 75:  # wrong device / election id / role
                req = p4runtime_pb2.WriteRequest(device_id=rng.choice((dev + 1, 0)), election_id=eid)
                if rng.random() < 0.5:
                    req.device_id = dev
                    req.election_id.low = rng.choice((1, 10, 999_999))
                    req.role = rng.choice(("", "x"))
                req.updates.add(type=1).entity.CopyFrom(rng.choice(desired))
                h.call("misuse", h.stub.Write, req)
            elif r < 82:  # garbage pipelines (VERIFY only: checked, never committed)
                req = p4runtime_pb2.SetForwardingPipelineConfigRequest(
                    device_id=dev, election_id=eid, action=rng.choice((1, 1, 0, 9)))
                req.config.p4info.CopyFrom(garbage_p4info(rng, info))
                req.config.p4_device_config = rng.randbytes(rng.choice((0, 10, 5000)))
                h.call("pipeline", h.stub.SetForwardingPipelineConfig, req)
            elif r < 92:  # undecodable bytes
                h.raw(rng.choice(("Write", "Read", "SetForwardingPipelineConfig", "Capabilities")),
                      rng.randbytes(rng.randint(0, 3000)))
            else:
                if rng.random() < 0.5:
                    h.call("caps", h.stub.Capabilities, p4runtime_pb2.CapabilitiesRequest())
                else:
                    h.call("getpipe", h.stub.GetForwardingPipelineConfig, p4runtime_pb2.GetForwardingPipelineConfigRequest(
                        device_id=dev, response_type=rng.choice((0, 1, 2, 3, 9))))
        # a stream that asks for the primary's (taken) election id ends with INVALID_ARGUMENT; it goes
        # first and alone: inside the flood below it raced the other streams for the per-host stream
        # slots and, started after them, was refused RESOURCE_EXHAUSTED instead (seen once in CI)
        flood_stop = threading.Event()
        taken = p4runtime_pb2.StreamMessageRequest()
        taken.arbitration.device_id = dev
        taken.arbitration.election_id.CopyFrom(eid_hi)
        dup = _stream(h.stub, [taken], flood_stop)
        h.requests += 1
        ended: Counter = Counter()
        dup.add_done_callback(lambda c: ended.update([c.code().name]))
        _wait(lambda: ended["INVALID_ARGUMENT"] >= 1, HANG_S)
        # then a flood of streams: idle, wrong device, duplicate election id; bounded by the server
        flood: list = []
        for i in range(30):
            m = p4runtime_pb2.StreamMessageRequest()
            m.arbitration.device_id = dev if i % 3 else dev + 5
            if i % 5 == 0:
                m.arbitration.election_id.CopyFrom(eid_hi)  # taken
            flood.append(_stream(h.stub, [m] if i % 2 else [], flood_stop))
            h.requests += 1
        for call in flood:
            call.add_done_callback(lambda c: ended.update([c.code().name]))
        # over the stream limit: RESOURCE_EXHAUSTED; the taken election id: INVALID_ARGUMENT
        _wait(lambda: ended["RESOURCE_EXHAUSTED"] >= 1 and ended["INVALID_ARGUMENT"] >= 1, HANG_S)
        flood_stop.set()
        for call in [dup, *flood]:
            call.cancel()
        assert ended["RESOURCE_EXHAUSTED"] >= 1 and ended["INVALID_ARGUMENT"] >= 1, ended
        # the primary's unary RPCs still answer: nothing is starved by the flood (bounded by HANG_S,
        # not by a quiet machine's latency)
        t0 = time.monotonic()
        h.call("caps", h.stub.Capabilities, p4runtime_pb2.CapabilitiesRequest())
        assert time.monotonic() - t0 < HANG_S
    finally:
        stop.set()
        primary.cancel()
        reader.join(HANG_S)
    errors = [m.error for m in responses if m.HasField("error")]
    print(f"\nhostile P4Runtime: {h.requests} requests, outcomes {dict(h.codes)}, "
          f"{len(errors)} PacketOut stream errors, stream flood {dict(ended)}")
    assert h.requests >= 1000
    assert not h.hangs, h.hangs[:5]
    assert not h.internal, h.internal[:5]
    assert len(errors) == len(pkt_outs), "every bad PacketOut gets a StreamError"
    assert all(e.HasField("packet_out") for e in errors)
    # the controller takes the switch back and repairs what the hostile primary wrote
    assert _wait(lambda: all(ctl.converge_all(attempts=2).values()), 30)
    _all_alive(fab, pids)
    # ...the tables, not the program's own state: register contents are the data plane's (reconcile
    # neither reads nor writes them).  A queue estimate written far above the trim threshold trims
    # every data packet on that port until trims have decayed it (one a trim) or a dequeue refreshes it
    # (seen 2026-12-07: egress_qdepth[1] = 101 on p1l1, so the check's one frame per path came out
    # trimmed; docs/dataplane.md, "Known limits").  Put them back to their initial values first.
    _reset_registers(ctl, TARGET_SWITCH, info)
    _forwards_everywhere(fab, plan, "after-p4rt")
    rss1 = _rss_kib(pid)
    print(f"switch {TARGET_SWITCH} RSS {rss0} KiB -> {rss1} KiB")
    assert rss1 - rss0 < RSS_GROWTH_LIMIT_KIB


# ---- 2. malformed frames --------------------------------------------------------------------------
def test_malformed_frames(fab, ctl, plan):
    from softswitch.engine.control import send_command

    rng = random.Random(SEED + 1)
    pids = _switch_pids(fab)
    pid = pids[TARGET_SWITCH]
    rss0 = _rss_kib(pid)
    rec = fab.state.procs[TARGET_SWITCH]
    ctl_addr = f"127.0.0.1:{rec.runtime_port}"
    evs = [ev for ev in srv6_profile(plan, "h1", "h3").evs if ev.port == 1]
    valid = [_srv6_frame(plan, "h1", "h3", ev, b"valid-payload-" + bytes(rng.randrange(64))) for ev in evs]

    port = next(lk.b.port if lk.a.node == "h1" else lk.a.port for lk in fab.topo.links
                if {lk.a.node, lk.b.node} == {"h1", TARGET_SWITCH})  # the leaf port of h1's nic1

    def rx_packets() -> int:
        return sum(r["rx_packets"] for r in send_command(ctl_addr, "port_stats", [port]))

    stats0 = send_command(ctl_addr, "switch_stats", [])
    tx = _raw(fab.netns("h1"), "nic1")
    rx = _raw(fab.netns("h3"), "nic1")
    sent = 0
    try:
        frames = malformed_frames(rng, valid, FRAMES)
        for b in range(FRAMES // FRAME_BATCH):
            base = rx_packets()
            n = 0
            for f in (next(frames) for _ in range(FRAME_BATCH)):
                tx.send(f)
                n += 1
            sent += n
            # every frame of the batch went into the switch (counted on its port) within HANG_S
            assert _wait(lambda base=base, n=n: rx_packets() - base >= n, HANG_S, 0.01), \
                f"batch {b}: the switch took in {rx_packets() - base} of {n} frames within {HANG_S} s"
            if b % 10 == 9:  # and it still forwards a valid frame (3 tries: the batch may still fill
                # the leaf's egress queue, where a frame is rightly tail-dropped)
                ok = False
                for attempt in range(3):
                    tag = f"valid-after-{sent}-{attempt}".encode()
                    tx.send(_srv6_frame(plan, "h1", "h3", evs[0], tag))
                    if _arrives(rx, tag, HANG_S / 3):
                        ok = True
                        break
                assert ok, f"no valid frame forwarded within {HANG_S} s after {sent} malformed ones"
    finally:
        tx.close()
        rx.close()
    stats1 = send_command(ctl_addr, "switch_stats", [])
    print(f"\nmalformed frames: {sent} sent; switch counters before {stats0} after {stats1}")
    assert sent >= 20_000
    _all_alive(fab, pids)
    _forwards_everywhere(fab, plan, "after-frames")
    rss1 = _rss_kib(pid)
    print(f"switch {TARGET_SWITCH} RSS {rss0} KiB -> {rss1} KiB")
    assert rss1 - rss0 < RSS_GROWTH_LIMIT_KIB


# ---- 3. hostile bootstrap peers, then a verified transfer -----------------------------------------
def _talk(path: str, data: bytes | None) -> bytes:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(HANG_S + 10)  # the server drops a silent peer after its 10 s hello timeout
    try:
        s.connect(path)
        if data is None:
            return b""
        try:
            s.sendall(data)
        except OSError:
            pass
        if not data.endswith(b"\n"):
            return b""  # half a message, then gone (a peer that stays is the idle one below)
        out = b""
        while b"\n" not in out:
            try:
                chunk = s.recv(65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        return out
    finally:
        s.close()


def test_hostile_bootstrap_then_verified_transfer(fab, ctl, plan, tmp_path):
    rng = random.Random(SEED + 2)
    evdir = tmp_path / "evplans"
    write_ev_files(plan, str(evdir), 1, "json", ("SRV6",))
    plans = {h: next(evdir.glob(f"{h}.*")) for h in ("h1", "h3")}
    sock = tmp_path / "perf.sock"
    env = {**os.environ, "PYTHONPATH": str(REPO)}

    def mrc(host: str, *args: str) -> list[str]:
        return ["ip", "netns", "exec", fab.netns(host), sys.executable, "-m", "mrc", *args,
                "--ifaces", "nic1,nic2", "--plan", str(plans[host])]

    server = subprocess.Popen(mrc("h3", "server", "--bootstrap", f"unix:{sock}", "--forever", "--json"),
                              cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert _wait(lambda: sock.exists() or server.poll() is not None, 30) and server.poll() is None, \
            server.stderr.read()[-3000:] if server.poll() is not None else "no bootstrap socket within 30 s"
        rss0 = _rss_kib(server.pid)
        answered = Counter()
        sessions = bootstrap_sessions(rng, BOOTSTRAP_SESSIONS)
        for s in sessions:
            t0 = time.monotonic()
            out = _talk(str(sock), s.data)
            assert time.monotonic() - t0 < HANG_S, f"bootstrap session '{s.what}' took {time.monotonic() - t0:.1f} s"
            answered["error" if b'"error"' in out else "closed"] += 1
            assert server.poll() is None, f"the server died on '{s.what}'"
        print(f"\nhostile bootstrap: {len(sessions)} sessions, answers {dict(answered)}")
        assert len(sessions) >= 50 and answered["error"] >= len(sessions) - 3
        # an idle peer must not hold up the real client
        idle = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        idle.connect(str(sock))
        try:
            client = subprocess.run(mrc("h1", "client", "--peer", f"unix:{sock}", "--verify", "--json",
                                        "--size", "64K", "--iters", "300", "--qps", "2", "--progress", "0",
                                        "--timeout", "60"),
                                    check=False, cwd=REPO, env=env, capture_output=True, text=True,
                                    timeout=120)
        finally:
            idle.close()
        assert client.returncode == 0, client.stderr[-3000:]
        rep = json.loads(client.stdout)
        assert rep["ok"], rep
        srv_rep = json.loads(server.stdout.readline())
        assert srv_rep["verify"] == "ok" and srv_rep["bytes_placed"] >= 2 * 64 * 1024, srv_rep
        assert server.poll() is None
        rss1 = _rss_kib(server.pid)
        print(f"mrc-perf server RSS {rss0} KiB -> {rss1} KiB; verified {srv_rep['bytes_placed']} bytes")
        assert rss1 - rss0 < RSS_GROWTH_LIMIT_KIB
        server.send_signal(signal.SIGTERM)
        server.wait(10)
        assert not sock.exists(), "SIGTERM left the unix socket behind"
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(10)
        server.stdout.close()
        server.stderr.close()
