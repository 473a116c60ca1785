"""mrc-perf: an ib_write_bw-like measurement between two endpoints (client writes, server receives).

Bootstrap (see :mod:`mrc.endpoint.bootstrap`), three messages each way:
  client ``hello`` {protocol version, gid, port MACs, mode, encap, mtu, mpr, qps, size, imm, seed, verify, cc, nscc}
  server ``accept`` {gid, port MACs, qpns, start PSNs, va, rkey}   (its QPs exist, not yet connected)
  client ``connect`` {qpns, start PSNs}  -> server connects, answers ``ready``
  ... RDMA writes ...
  client ``done`` {messages}  -> server answers ``result`` {verify, bytes placed, immediates, counters}
Messages go round robin over the QPs, up to ``tx_depth`` outstanding on each; QP i always writes
to ``va + i * size``; the payload of QP i is
``random.Random(seed * 1000 + i).randbytes(size)`` so the server can check every byte.
"""

from __future__ import annotations

import ipaddress
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mrc.core import CC_NAMES, Completion, EvEvent, NsccConfig, WcOpcode, WcStatus
from mrc.core.qp import PATH_MTUS
from mrc.ctl import EvProfile
from mrc.endpoint.bootstrap import Address, BootstrapError, Channel, Listener, connect
from mrc.endpoint.driver import Endpoint, EndpointError, PortConfig
from mrc.endpoint.netif import format_mac, parse_mac
from mrc.endpoint.plan import HostPlan, PlanError, direct_evs, load_profile
from mrc.wire import formats as F

PROTO_VERSION = 1
BASE_VA = 0x1_0000_0000


class PerfError(RuntimeError):
    """A run could not be set up or failed (the message says what to fix)."""


@dataclass
class HostConfig:
    """How to build this host's endpoint: ports (number, interface), encapsulation, addressing."""

    ifaces: list[tuple[int, str]]
    encap: str = "srv6"
    plan: HostPlan | None = None
    gid: bytes | None = None
    next_hop_macs: dict[int, bytes] = field(default_factory=dict)
    evs_per_port: int = 2
    rate_gbps: float = 10.0
    telemetry: bool = False
    tx_delay_us: int = 0  # Endpoint(tx_delay_us): propagation delay on this host's side

    def open(self) -> Endpoint:
        """Open the endpoint on the interfaces (next hops from the command line or the plan)."""
        ports = []
        for num, ifname in self.ifaces:
            mac = nh = None
            if self.plan is not None and num in self.plan.ports:
                mac, nh = self.plan.ports[num].mac, self.plan.ports[num].next_hop_mac
            nh = self.next_hop_macs.get(num, nh)
            ports.append(PortConfig(ifname, num, mac, nh))
        first_mac = None
        gid = self.gid or (self.plan.gid if self.plan else None)
        if gid is None:  # direct links: a ULA from the first port's MAC, unique per host
            from mrc.endpoint import netif

            s = netif.open_port_socket(ports[0].ifname, rcvbuf=4096, sndbuf=4096)
            try:
                first_mac = netif.if_mac(s, ports[0].ifname)
            finally:
                s.close()
            gid = bytes.fromhex("fd00") + bytes(8) + first_mac
        return Endpoint(ports, gid, encap=self.encap, port_rate_gbps=self.rate_gbps, telemetry=self.telemetry,
                        tx_delay_us=self.tx_delay_us)

    def peer_setup(self, ep: Endpoint, peer_gid: bytes, peer_macs: dict[int, bytes]) -> tuple[Any, int]:
        """The ctl EV profile to the peer (the plan's, else the direct-link EVs) and its ev_min_active; fill
        missing next hops with the peer's MACs (direct link)."""
        for p in ep.ports:
            if p not in ep.core.peer_macs:
                if p not in peer_macs:
                    raise PerfError(f"no next-hop MAC for port {p}: the peer has no port {p} and no plan "
                                    "or --next-hop-macs gives one")
                ep.set_next_hop(p, peer_macs[p])
        if self.plan is not None:  # the plan's profile becomes an mrc_ctl EV profile the QPs bind to
            try:
                peer = self.plan.peer_by_gid(peer_gid)
                self.plan.evs_to(peer, self.encap)
                pid = ep.ctl.unused_profile_id()  # a fresh profile per peer set-up
                prof = load_profile(ep.ctl, peer.profiles[self.encap], pid, ports=ep.ports)
            except PlanError as exc:
                raise PerfError(str(exc)) from None
            return prof, prof.ev_min_active
        me = int.from_bytes(ep.gid[-2:], "big")
        them = int.from_bytes(peer_gid[-2:], "big")
        # direct links: the EVs become an mrc_ctl EV profile too (a fresh one per set-up), the QPs bind to it
        pid = ep.core.make_ev_profile(direct_evs(self.encap, ep.ports, self.evs_per_port, me, them), 1)
        return ep.ctl.ev_profile(pid), 1


@dataclass
class PerfParams:
    """What the client measures."""

    size: int = 65536
    iters: int = 1000
    qps: int = 1
    mode: str = "mrc"
    imm: bool = False
    duration: float = 0.0  # > 0: post for this many seconds instead of ``iters`` messages
    tx_depth: int = 16  # outstanding messages per QP
    verify: bool = False
    seed: int = 1
    mtu: int = 0  # 0: the largest the interfaces allow
    mpr: int = 1  # PSN window in units of 128 (1 = 128 packets in flight)
    progress: float = 1.0  # seconds between progress reports (0: none)
    timeout: float = 120.0
    cc: str = ""  # congestion control: nscc | dcqcn | none; "": NSCC for MRC, DCQCN for RC
    nscc: dict[str, Any] = field(default_factory=dict)  # NSCC CC profile parameters (NsccConfig names, base_rtt ns)
    resend_dscp: int | None = F.DSCP_RESEND  # MRC: DSCP of data resent after a loss (None: as data; QpAttr)

    def check(self) -> None:
        if self.mode not in ("mrc", "rc"):
            raise PerfError(f"--mode must be mrc or rc, not {self.mode!r}")
        if self.size < 1 or self.size > 1 << 32:
            raise PerfError("--size must be 1 byte .. 4 GiB")
        if self.qps < 1 or self.qps > 64:
            raise PerfError("--qps must be 1..64")
        if not 0 <= self.duration < 1e9:  # -3 ran --iters silently, nan moved 0 bytes and exited 0, inf a traceback
            raise PerfError(f"--duration must be 0 (count --iters) or a number of seconds, got {self.duration:g}")
        if self.iters < 1 and self.duration <= 0:
            raise PerfError("--iters must be >= 1 (or give --duration)")
        if self.duration <= 0 and self.iters < self.qps:
            raise PerfError(f"--iters {self.iters} is less than --qps {self.qps}: every QP writes at least one "
                            "message (the server verifies every QP's buffer)")
        if self.tx_depth < 1:
            raise PerfError("--tx-depth must be >= 1")
        if self.mtu and self.mtu not in PATH_MTUS:  # said here, not by the server as a bootstrap refusal
            raise PerfError(f"--mtu must be one of {', '.join(map(str, PATH_MTUS))} (or 0: the largest the "
                            "interfaces allow)")
        if not 1 <= self.mpr <= ServerLimits.max_mpr:
            raise PerfError(f"--mpr must be 1..{ServerLimits.max_mpr} (units of 128 packets; a server takes no more)")
        if not self.timeout > 0:  # nan too
            raise PerfError("--timeout must be positive")
        if not self.progress >= 0 or self.progress == float("inf"):  # nan too; -1 meant "none" silently
            raise PerfError(f"--progress must be 0 (none) or a number of seconds, got {self.progress:g}")
        if self.cc not in ("", *CC_NAMES):
            raise PerfError(f"--cc must be one of {', '.join(CC_NAMES)}, not {self.cc!r}")
        if self.nscc:
            if self.cc_name() != "nscc":
                raise PerfError(f"--nscc sets NSCC parameters, but this run's congestion control is {self.cc_name()}")
            check_nscc(self.nscc, "--nscc")

    def cc_name(self) -> str:
        """The congestion control this run uses (the mode's default when none was asked for)."""
        return self.cc or ("nscc" if self.mode == "mrc" else "dcqcn")


def check_nscc(params: Any, where: str) -> dict[str, Any]:
    """NSCC CC profile parameters (``NsccConfig`` names, ``base_rtt`` in ns among them); PerfError if bad."""
    if not isinstance(params, dict) or len(params) > 16:
        raise PerfError(f"{where}: NSCC parameters are a mapping of at most 16 names to numbers")
    for k, v in params.items():
        if not isinstance(k, str) or isinstance(v, bool) != (k == "disable_qa") or not isinstance(v, (int, float)):
            raise PerfError(f"{where}: {k!r} = {v!r} is not an NSCC parameter value")
    if "base_rtt" not in params:
        raise PerfError(f"{where}: give base_rtt (ns) with the other NSCC parameters (without it each QP "
                        "learns the base RTT and derives every parameter from it)")
    try:
        NsccConfig().replace(**params)
    except (TypeError, ValueError) as exc:
        raise PerfError(f"{where}: {exc}") from None
    return dict(params)


def cc_binding(core: Any, cc: str, nscc: dict[str, Any], mode: str, mtu: int) -> tuple[str | None, int | None]:
    """``(QpAttr.cc, QpAttr.cc_profile_id)``: NSCC (``nscc`` its parameters) and none are one CC profile
    of the endpoint's ``ctl`` (``core``: the ``mrc.core.Endpoint``) that every QP of the run binds to;
    DCQCN is not an mrc_ctl algorithm and stays ``QpAttr.cc``."""
    try:
        pid = core.make_cc_profile(cc, mode=mode, mtu=mtu, nscc=nscc or None)
    except ValueError as exc:
        raise PerfError(str(exc)) from None
    return (cc if pid is None else None), pid


def payload(seed: int, qp_index: int, size: int) -> bytes:
    """The bytes QP ``qp_index`` writes (deterministic, so the receiver can verify them)."""
    return random.Random(seed * 1000 + qp_index).randbytes(size)


def percentile(sorted_vals: list[float], q: float) -> float:
    """Nearest-rank percentile of an ascending list (0.0 if empty)."""
    if not sorted_vals:
        return 0.0
    k = max(0, min(len(sorted_vals) - 1, int(-(-q * len(sorted_vals) // 1)) - 1))
    return sorted_vals[k]


def ev_timeline(events: list[EvEvent], t0_ns: int) -> list[dict[str, Any]]:
    """EV events as plain records with times relative to the start of the run, each with the evidence of
    the rule that made the change (``EvEvent.evidence``: durations, nothing to rebase)."""
    return [{"t_s": round((e.time_ns - t0_ns) / 1e9, 6), "qpn": e.qpn, "ev": e.ev_index, "port": e.port,
             "from": e.old_state.name, "to": e.new_state.name, "cause": e.cause, "evidence": e.evidence}
            for e in events]


def link_timeline(ep: Endpoint, t0_ns: int) -> list[dict[str, Any]]:
    return [{"t_s": round((e.time_ns - t0_ns) / 1e9, 6), "port": e.port, "ifname": e.ifname,
             "state": "up" if e.up else "down"} for e in ep.link_events]


def _retx(stats: dict[str, Any]) -> dict[str, int]:
    out = {"rack": 0, "timeout": 0, "trim": 0, "nak": 0, "rnr": 0}
    for q in stats["qps"].values():
        for k in out:
            out[k] += q[f"retx_{k}"]
    out["total"] = sum(out.values())
    out["data_packets"] = sum(q["data_packets_sent"] for q in stats["qps"].values())
    return out


def _macs(ep: Endpoint) -> dict[str, str]:
    return {str(p): format_mac(ep.port_mac(p)) for p in ep.ports}


def _peer_macs(d: Any) -> dict[int, bytes]:
    if not isinstance(d, dict):
        raise PerfError("bootstrap: 'ports' must map port numbers to MACs")
    try:
        return {int(k): parse_mac(str(v)) for k, v in d.items()}
    except ValueError as exc:
        raise PerfError(f"bootstrap: {exc}") from None


def _gid(text: Any) -> bytes:
    try:
        return ipaddress.IPv6Address(str(text)).packed
    except ValueError:
        raise PerfError(f"bootstrap: bad GID {text!r}") from None


# ---------------------------------------------------------------------------------------------
# client
# ---------------------------------------------------------------------------------------------
def run_client(host: HostConfig, params: PerfParams, peer: Address,
               on_progress: Callable[[dict[str, Any]], None] | None = None,
               on_note: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Connect to a server, run the writes, return the report (see docs/mrc_endpoint.md).
    ``on_note`` hears what the server says before the run (that it queued this client), and once that
    the client is still waiting for the server to answer (after ``bootstrap.WAIT_NOTE_S``)."""
    params.check()
    started = time.monotonic()
    ch = connect(peer, timeout_s=min(30.0, params.timeout), on_wait=on_note)
    try:
        with host.open() as ep:
            return _client(ep, ch, host, params, on_progress, on_note, started)
    finally:
        ch.close()


def _client(ep: Endpoint, ch: Channel, host: HostConfig, prm: PerfParams,
            on_progress: Callable[[dict[str, Any]], None] | None,
            on_note: Callable[[str], None] | None = None, started: float | None = None) -> dict[str, Any]:
    mtu = prm.mtu or ep.max_mtu()
    if mtu > ep.max_mtu():
        raise PerfError(f"--mtu {mtu} does not fit the interfaces (largest: {ep.max_mtu()})")
    ch.send({"hello": PROTO_VERSION, "gid": str(ipaddress.IPv6Address(ep.gid)), "ports": _macs(ep),
             "mode": prm.mode, "encap": host.encap, "mtu": mtu, "mpr": prm.mpr, "qps": prm.qps,
             "size": prm.size, "imm": prm.imm, "seed": prm.seed, "verify": prm.verify, "cc": prm.cc_name(),
             "nscc": prm.nscc})
    acc = ch.recv(30.0)
    if "queued" in acc:  # a --forever server busy with another client: wait for it, up to --timeout
        if on_note is not None:
            on_note(f"queued: {acc['queued']}")
        wait = max(1.0, prm.timeout - (time.monotonic() - (started or time.monotonic())))
        try:
            acc = ch.recv(wait)
        except BootstrapError:
            raise PerfError(f"the server kept this client queued behind another client's session for "
                            f"{wait:.0f} s (--timeout {prm.timeout:g})") from None
    if "accept" not in acc:
        raise PerfError(f"bootstrap: expected 'accept', got {sorted(acc)}")
    peer_gid = _gid(acc["gid"])
    evs, min_active = host.peer_setup(ep, peer_gid, _peer_macs(acc["ports"]))
    n_evs = len(evs.evs) if isinstance(evs, EvProfile) else len(evs)  # a plan's ctl profile, or an EV list
    cc, cc_pid = cc_binding(ep.core, prm.cc_name(), prm.nscc, prm.mode, mtu)
    attr = ep.qp_attr(prm.mode, mtu=mtu, mpr=prm.mpr, ev_min_active=min_active, cc=cc, cc_profile_id=cc_pid,
                      resend_dscp=prm.resend_dscp)
    qps = [ep.create_qp(evs, attr) for _ in range(prm.qps)]
    rng = random.Random()
    sq = [rng.getrandbits(24) for _ in qps]
    for qp, rq, rpsn, spsn in zip(qps, acc["qpns"], acc["psns"], sq, strict=True):
        ep.connect(qp, int(rq), peer_gid, rq_psn=int(rpsn), sq_psn=spsn)
    ch.send({"connect": [qp.qpn for qp in qps], "psns": sq})
    ch.recv(30.0)  # ready
    va, rkey = int(acc["va"]), int(acc["rkey"])
    data = [payload(prm.seed, i, prm.size) for i in range(prm.qps)]
    start_seq = [qp.snd_una for qp in qps]

    total = prm.iters if prm.duration <= 0 else None
    posted = done = 0
    outstanding = [0] * prm.qps
    post_ns: dict[int, tuple[int, int]] = {}  # wr_id -> (post time, QP index)
    lat_ns: list[int] = []
    errors: list[str] = []
    t0 = time.monotonic_ns()
    stop_post = t0 + int(prm.duration * 1e9) if prm.duration > 0 else None
    deadline = t0 + int(prm.timeout * 1e9)
    next_report = t0 + int(prm.progress * 1e9) if prm.progress > 0 else None
    first_post = last_done = t0
    events: list[EvEvent] = []
    server_gone = False
    next_ctl = t0
    while True:
        now = time.monotonic_ns()
        may_post = (total is None and now < (stop_post or 0)) or (total is not None and posted < total)
        if may_post and not errors:
            # round robin: one message per QP with room in each pass (filling QP 0 to --tx-depth
            # first left later QPs without a message when --iters < qps x tx_depth)
            room = True
            while room and (total is None or posted < total):
                room = False
                for i, qp in enumerate(qps):
                    if outstanding[i] >= prm.tx_depth or (total is not None and posted >= total):
                        continue
                    k = posted
                    post_ns[k] = (time.monotonic_ns(), i)
                    ep.post_write(qp, k, data[i], va + i * prm.size, rkey,
                                  imm=(k & 0xFFFFFFFF) if prm.imm else None)
                    outstanding[i] += 1
                    posted += 1
                    room = True
        elif done >= posted:
            break
        if now > deadline:
            errors.append(f"timeout after {prm.timeout:g} s with {posted - done} messages outstanding")
            break
        ep.progress(0.05)
        for c in ep.poll_completions():
            if c.opcode is not WcOpcode.RDMA_WRITE:
                continue
            done += 1
            t_post, qi = post_ns.pop(c.wr_id, (c.time_ns, 0))
            outstanding[qi] -= 1
            if c.status is not WcStatus.SUCCESS:
                errors.append(f"wr {c.wr_id}: {c.status.value}")
                continue
            lat_ns.append(c.time_ns - t_post)
            last_done = max(last_done, c.time_ns)
        if errors and all(qp.state.value == "ERR" for qp in qps):
            break
        if now >= next_ctl:  # a server that ends (Ctrl-C, crash, session timeout) closes the bootstrap
            next_ctl = now + 200_000_000
            try:
                ch.poll(0)  # the server says nothing before our 'done'; an EOF or an error means it is gone
            except BootstrapError as exc:
                errors.append(f"the server ended the session: {exc}")
                server_gone = True
                break
        events.extend(ep.poll_events())
        if next_report is not None and now >= next_report:
            next_report = now + int(prm.progress * 1e9)
            if on_progress is not None:
                on_progress(_progress(qps, start_seq, mtu, prm, posted, done, t0, now))
    events.extend(ep.poll_events())
    seconds = max(1e-9, (last_done - first_post) / 1e9)
    nbytes = len(lat_ns) * prm.size
    lat = sorted(x / 1000 for x in lat_ns)
    stats = ep.stats()
    server: dict[str, Any] = {}
    if not server_gone:
        try:
            ch.send({"done": len(lat_ns)})  # messages that completed successfully: the server expects their immediates
            server = ch.recv(60.0).get("result", {})
        except BootstrapError as exc:
            errors.append(f"no result from the server: {exc}")
    ok = not errors and (not prm.verify or server.get("verify") == "ok") and (not prm.imm or server.get("imm") == "ok")
    return {
        "role": "client", "ok": ok, "errors": errors,
        "config": {"mode": prm.mode, "cc": prm.cc_name(), "nscc": prm.nscc, "rate_gbps": host.rate_gbps, "encap": host.encap, "qps": prm.qps, "size": prm.size, "iters": prm.iters,
                   "duration": prm.duration, "imm": prm.imm, "mtu": mtu, "mpr": prm.mpr, "tx_depth": prm.tx_depth,
                   "ports": {str(p): stats["ports"][p]["ifname"] for p in ep.ports},
                   "evs": n_evs, "gid": str(ipaddress.IPv6Address(ep.gid)),
                   "peer_gid": str(ipaddress.IPv6Address(peer_gid))},
        "results": {"messages": len(lat_ns), "bytes": nbytes, "seconds": round(seconds, 6),
                    "mb_per_s": round(nbytes / seconds / 1e6, 3), "gbit_per_s": round(nbytes * 8 / seconds / 1e9, 4),
                    "latency_us": {"min": round(lat[0], 1) if lat else 0.0,
                                   "p50": round(percentile(lat, 0.50), 1), "p99": round(percentile(lat, 0.99), 1),
                                   "p999": round(percentile(lat, 0.999), 1),
                                   "max": round(lat[-1], 1) if lat else 0.0}},
        "retransmissions": _retx(stats),
        "ev_timeline": ev_timeline(events, t0),
        "link_events": link_timeline(ep, t0),
        "counters": stats,
        "server": server,
    }


def acked_bytes(packets: int, size: int, mtu: int) -> int:
    """Payload bytes in the first ``packets`` packets of a QP that writes ``size``-byte messages one
    after another, each cut into ``ceil(size / mtu)`` packets (only a message's last one is short)."""
    per = max(1, -(-size // mtu))
    whole, part = divmod(max(0, packets), per)
    return whole * size + part * mtu


def _progress(qps, start_seq, mtu, prm, posted, done, t0, now) -> dict[str, Any]:
    acked = sum(acked_bytes(qp.snd_una - s, prm.size, mtu) for qp, s in zip(qps, start_seq, strict=True))
    want = prm.size * (prm.iters if prm.duration <= 0 else max(posted, 1))
    acked = min(acked, want)
    el = max(1e-9, (now - t0) / 1e9)
    return {"t_s": round(el, 3), "acked_bytes": acked, "fraction": round(acked / want, 4), "messages_done": done,
            "mb_per_s": round(acked / el / 1e6, 3)}


# ---------------------------------------------------------------------------------------------
# server
# ---------------------------------------------------------------------------------------------
@dataclass
class ServerLimits:
    """What a server accepts from a client (docs/mrc_endpoint.md "Server limits")."""

    max_bytes: int = 1 << 30  # qps x size
    timeout: float = 600.0  # longest a session may last
    max_qps: int = 64
    max_mpr: int = 64  # PSN window in units of 128 packets
    hello_timeout: float = 10.0  # a connection must send its hello (and later its connect) within this
    max_pending: int = 8  # connections between accept and the end of their session; more get "busy"


@dataclass(frozen=True)
class Hello:
    """A validated client ``hello``."""

    gid: bytes
    ports: dict[int, bytes]
    mode: str
    mtu: int
    mpr: int
    qps: int
    size: int
    seed: int
    imm: bool
    verify: bool
    cc: str  # congestion control the client asked for (nscc | dcqcn | none)
    nscc: dict[str, Any] = field(default_factory=dict)  # ...and its NSCC parameters (empty: learn the base RTT)


def _int(hello: dict[str, Any], key: str, lo: int, hi: int) -> int:
    v = hello.get(key)
    if type(v) is not int:
        raise PerfError(f"bootstrap: '{key}' must be an integer, not {type(v).__name__}")
    if not lo <= v <= hi:
        raise PerfError(f"bootstrap: '{key}' = {v} is outside {lo}..{hi}")
    return v


def _bool(hello: dict[str, Any], key: str) -> bool:
    v = hello.get(key)
    if type(v) is not bool:
        raise PerfError(f"bootstrap: '{key}' must be true or false")
    return v


def check_hello(hello: dict[str, Any], host: HostConfig, limits: ServerLimits) -> Hello:
    """Validate a client's ``hello`` against the protocol and ``limits``; PerfError says what is wrong."""
    if hello.get("hello") != PROTO_VERSION:
        raise PerfError(f"bootstrap: unsupported hello {hello.get('hello')!r} (want {PROTO_VERSION})")
    if hello.get("encap") != host.encap:
        raise PerfError(f"encap mismatch: client {hello.get('encap')}, server {host.encap}")
    mode = hello.get("mode")
    if mode not in ("mrc", "rc"):
        raise PerfError(f"bootstrap: 'mode' must be mrc or rc, not {mode!r}")
    ports = hello.get("ports")
    if not isinstance(ports, dict) or len(ports) > 64:
        raise PerfError("bootstrap: 'ports' must map at most 64 port numbers to MACs")
    peer_macs = _peer_macs(ports)
    if any(not 0 <= p < 1 << 16 for p in peer_macs):
        raise PerfError("bootstrap: port numbers must be 0..65535")
    qps = _int(hello, "qps", 1, limits.max_qps)
    size = _int(hello, "size", 1, 1 << 32)
    if qps * size > limits.max_bytes:
        raise PerfError(f"qps x size = {qps * size} bytes exceeds the server's --max-bytes {limits.max_bytes}")
    return Hello(_gid(hello.get("gid")), peer_macs, mode, _int(hello, "mtu", 256, 1 << 16),
                 _int(hello, "mpr", 1, limits.max_mpr), qps, size, _int(hello, "seed", -(1 << 63), (1 << 63) - 1),
                 _bool(hello, "imm"), _bool(hello, "verify"), cc := _cc(hello, mode), _nscc(hello, cc))


def _nscc(hello: dict[str, Any], cc: str) -> dict[str, Any]:
    nscc = hello.get("nscc") or {}  # older clients send none
    if nscc and cc != "nscc":
        raise PerfError(f"bootstrap: 'nscc' parameters given for congestion control {cc}")
    return check_nscc(nscc, "bootstrap: 'nscc'") if nscc else {}


def _cc(hello: dict[str, Any], mode: str) -> str:
    cc = hello.get("cc") or ("nscc" if mode == "mrc" else "dcqcn")  # older clients send none
    if cc not in CC_NAMES:
        raise PerfError(f"bootstrap: 'cc' must be one of {', '.join(CC_NAMES)}, not {cc!r}")
    return cc


def handshake(ch: Channel, host: HostConfig, limits: ServerLimits) -> Hello:
    """Receive and validate a client's hello (within ``limits.hello_timeout``)."""
    return check_hello(ch.recv(limits.hello_timeout), host, limits)


def _refuse(ch: Channel, exc: BaseException) -> None:
    try:
        ch.send({"error": str(exc)})
    except BootstrapError:
        pass


SESSION_ERRORS = (PerfError, BootstrapError, EndpointError, PlanError, ValueError, OverflowError)


def serve_one(host: HostConfig, listener: Listener, limits: ServerLimits,
              accept_timeout: float | None = None) -> dict[str, Any] | None:
    """Wait for one client, receive its writes, verify, report; None if nobody came in time."""
    ch = listener.accept(accept_timeout)
    if ch is None:
        return None
    try:
        hello = handshake(ch, host, limits)
        with host.open() as ep:
            return _serve(ep, ch, host, hello, limits)
    except SESSION_ERRORS as exc:
        _refuse(ch, exc)
        raise
    finally:
        ch.close()


def serve_forever(host: HostConfig, listener: Listener, limits: ServerLimits,
                  on_result: Callable[[dict[str, Any]], None],
                  on_error: Callable[[str], None], stop: threading.Event | None = None) -> None:
    """Serve clients until ``stop`` is set (or KeyboardInterrupt): no peer can end or stall it.

    Each connection gets its own thread, which reads and validates the hello (bounded by
    ``limits.hello_timeout``) so that an idle or slow peer holds up nobody; the sessions
    themselves (which own the interfaces) run one at a time.  Past ``limits.max_pending``
    connections a new one is answered ``{"error": "server busy ..."}`` and closed.  A bad peer
    is answered ``{"error": ...}``, reported through ``on_error`` and forgotten."""
    stop = stop or threading.Event()
    session = threading.Lock()
    slots = threading.BoundedSemaphore(limits.max_pending)
    threads: list[threading.Thread] = []

    def one(ch: Channel) -> None:
        try:
            hello = handshake(ch, host, limits)
            if not session.acquire(blocking=False):
                # tell the client why its 'accept' is late: it waits (up to its --timeout), not 30 s
                ch.send({"queued": "another client's session is running; this one starts after it"})
                session.acquire()
            try:
                if stop.is_set():
                    return
                with host.open() as ep:
                    on_result(_serve(ep, ch, host, hello, limits))
            finally:
                session.release()
        except SESSION_ERRORS as exc:
            _refuse(ch, exc)
            on_error(str(exc))
        except Exception as exc:  # noqa: BLE001 - a peer must never end the daemon
            _refuse(ch, exc)
            on_error(f"internal error: {type(exc).__name__}: {exc}")
        finally:
            ch.close()
            slots.release()

    while not stop.is_set():
        ch = listener.accept(0.25)
        threads = [t for t in threads if t.is_alive()]
        if ch is None:
            continue
        if not slots.acquire(blocking=False):
            _refuse(ch, PerfError(f"server busy: {limits.max_pending} connections are pending; retry later"))
            ch.close()
            on_error("refused a connection: server busy")
            continue
        t = threading.Thread(target=one, args=(ch,), name="mrc-perf-session", daemon=True)
        t.start()
        threads.append(t)
    for t in threads:
        t.join(timeout=1.0)


def _serve(ep: Endpoint, ch: Channel, host: HostConfig, hello: Hello, limits: ServerLimits) -> dict[str, Any]:
    mode, mtu, mpr, nqps, size, seed = hello.mode, hello.mtu, hello.mpr, hello.qps, hello.size, hello.seed
    want_imm, verify = hello.imm, hello.verify
    if mtu > ep.max_mtu():
        raise PerfError(f"MTU {mtu} does not fit the server's interfaces (largest {ep.max_mtu()})")
    peer_gid = hello.gid
    evs, min_active = host.peer_setup(ep, peer_gid, hello.ports)
    buf = bytearray(nqps * size)
    mr = ep.reg_mr(buf, BASE_VA)
    cc, cc_pid = cc_binding(ep.core, hello.cc, hello.nscc, mode, mtu)
    attr = ep.qp_attr(mode, mtu=mtu, mpr=mpr, ev_min_active=min_active, cc=cc, cc_profile_id=cc_pid)
    qps = [ep.create_qp(evs, attr) for _ in range(nqps)]
    rng = random.Random()
    sq = [rng.getrandbits(24) for _ in qps]
    ch.send({"accept": PROTO_VERSION, "gid": str(ipaddress.IPv6Address(ep.gid)), "ports": _macs(ep),
             "qpns": [q.qpn for q in qps], "psns": sq, "va": BASE_VA, "rkey": mr.rkey})
    con = ch.recv(limits.hello_timeout)
    try:
        rqs, rpsns = con["connect"], con["psns"]
        if not (isinstance(rqs, list) and isinstance(rpsns, list) and len(rqs) == len(rpsns) == nqps):
            raise ValueError(f"want {nqps} QPNs and PSNs")
        for qp, rq, rpsn, spsn in zip(qps, rqs, rpsns, sq, strict=True):
            if type(rq) is not int or type(rpsn) is not int or not (0 < rq < 1 << 24 and 0 <= rpsn < 1 << 24):
                raise ValueError(f"QPN {rq!r} / PSN {rpsn!r} is not a 24-bit number")
            ep.connect(qp, rq, peer_gid, rq_psn=rpsn, sq_psn=spsn)
    except (KeyError, TypeError, ValueError) as exc:
        raise PerfError(f"bootstrap: bad connect ({exc})") from None
    ch.send({"ready": True})
    t0 = time.monotonic_ns()
    deadline = time.monotonic() + limits.timeout
    imms: dict[int, list[int]] = {q.qpn: [] for q in qps}
    events: list[EvEvent] = []
    done_msg = None
    next_ctl = 0.0
    while time.monotonic() < deadline:
        ep.progress(0.01)
        _collect(ep.poll_completions(), imms)
        events.extend(ep.poll_events())
        if time.monotonic() >= next_ctl:
            next_ctl = time.monotonic() + 0.005
            done_msg = ch.poll(0)
            if done_msg is not None:
                break
    _collect(ep.poll_completions(), imms)
    events.extend(ep.poll_events())
    stats = ep.stats()
    result: dict[str, Any] = {"role": "server", "timed_out": done_msg is None}
    if verify:
        bad = [i for i in range(nqps) if buf[i * size : (i + 1) * size] != payload(seed, i, size)]
        result["verify"] = "ok" if not bad else f"MISMATCH on QP index {bad}"
    else:
        result["verify"] = "skipped"
    placed = sum(stats["qps"][q.qpn]["bytes_placed"] for q in qps)
    imm_all = [v for q in qps for v in imms[q.qpn]]
    in_order = all(b > a for q in qps for a, b in zip(imms[q.qpn], imms[q.qpn][1:], strict=False))
    if want_imm:  # one immediate per message the client completed, rising per QP
        sent = done_msg.get("done") if isinstance(done_msg, dict) else None
        if sent is None:
            result["imm"] = "unchecked (the client's message count never came)"
        elif len(imm_all) != sent or not in_order:
            result["imm"] = f"MISMATCH: {len(imm_all)} immediates for {sent} messages" + \
                ("" if in_order else ", out of order on a QP")
        else:
            result["imm"] = "ok"
    else:
        result["imm"] = "skipped"
    result.update({
        "bytes_placed": placed,
        "duplicates_received": sum(stats["qps"][q.qpn]["duplicates_received"] for q in qps),
        "imm_completions": len(imm_all),
        "imm_in_order": in_order,
        "imm_expected": want_imm,
        "ev_timeline": ev_timeline(events, t0),
        "link_events": link_timeline(ep, t0),
        "counters": stats,
    })
    ch.send({"result": _jsonable(result)})
    return result


def _collect(cs: list[Completion], imms: dict[int, list[int]]) -> None:
    for c in cs:
        if c.opcode is WcOpcode.RECV_RDMA_WITH_IMM and c.qpn in imms and c.imm is not None:
            imms[c.qpn].append(c.imm)


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    return obj
