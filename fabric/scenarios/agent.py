"""One host's traffic agent: an MRC endpoint in the host's namespace, driven over stdin/stdout.

Started by the runner as ``ip netns exec <ns> python fabric/scenarios/agent.py`` (a script: it imports only ``mrc``); JSON lines:
  in ``config``  -> out ``hello`` {gid, in: {flow: {qpns, psns, va, rkey}}, out: {flow: {qpns, psns}}}
  in ``connect`` -> out ``ready``;  in ``start`` {t0_ns} -> traffic; out ``progress`` lines, ``sent``
  in ``stop`` -> out ``halted`` {done: {flow: messages}}; in ``verify`` {done} -> out ``result`` (samples, latencies, retransmissions by cause,
  EV events, link events, counters, byte-for-byte verification of every completed incoming message).
Message k of a flow goes round robin to QP k % qps and lands at ``va + k * size``; its bytes are
``payload(seed, flow, k, size)`` so the receiver can check every byte.

Paths: the plan's EV profile to each peer is loaded once into the endpoint's ``MrcCtlContext``
(:func:`peer_profile`, as ``mrc-perf --plan`` does) and every QP to that peer binds to it by id, so EV
states, ``ev_min_active`` and EV events are the profile's, shared by those QPs.  Congestion control:
one CC profile of the context (:func:`cc_binding`; NSCC or none) that every QP binds to by id, so a
``modify_cc_profile`` reaches them all; DCQCN by name.
"""
from __future__ import annotations

import ipaddress
import json
import os
import random
import select
import sys
import time
from dataclasses import dataclass, field, replace
from typing import Any

from mrc.core import WcOpcode, WcStatus
from mrc.endpoint import Endpoint, HostPlan, PortConfig, load_plan, load_profile

BASE_VA = 0x2_0000_0000


def payload_key(seed: int, flow: int, msg: int) -> int:
    """The generator seed of :func:`payload` (the simulator makes the same bytes a block at a time)."""
    return (seed << 40) ^ (flow << 20) ^ msg


def payload(seed: int, flow: int, msg: int, size: int) -> bytes:
    """The bytes of message ``msg`` of flow ``flow`` (deterministic, so receivers can check them)."""
    return random.Random(payload_key(seed, flow, msg)).randbytes(size)


@dataclass
class OutFlow:
    """A flow this host sends: its QPs, what it posted and when each message completed."""

    fid: int
    dst: str
    size: int
    count: int
    tx_depth: int
    qps: list = field(default_factory=list)
    psns: list[int] = field(default_factory=list)
    start_seq: list[int] = field(default_factory=list)
    posted: int = 0
    done: int = 0
    failed: int = 0
    outstanding: list[int] = field(default_factory=list)
    post_ns: dict[int, int] = field(default_factory=dict)
    lat_us: list[float] = field(default_factory=list)
    last_done_ns: int = 0
    va: int = 0
    rkey: int = 0


class Lines:
    """Non-blocking JSON-lines reader on a file descriptor."""

    def __init__(self, fd: int) -> None:
        self.fd, self.buf, self.eof = fd, b"", False

    def poll(self, timeout_s: float = 0.0) -> dict | None:
        while b"\n" not in self.buf and not self.eof:
            if not select.select([self.fd], [], [], timeout_s)[0]:
                return None
            chunk = os.read(self.fd, 65536)
            if not chunk:
                self.eof = True
            self.buf += chunk
        if b"\n" not in self.buf:
            return None
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def wait(self, timeout_s: float) -> dict:
        end = time.monotonic() + timeout_s
        while (left := end - time.monotonic()) > 0:
            msg = self.poll(left)
            if msg is not None:
                return msg
            if self.eof:
                raise SystemExit("agent: runner closed stdin")
        raise SystemExit("agent: timed out waiting for the runner")


def _plan_profile(plan: HostPlan, peer: str, encap: str, mode: str, pin: int):
    """The plan's ``encap`` EV profile to ``peer`` as this QP mode loads it.  RC: the EVs are rotated so
    that slot 0 -- the one path an RC QP takes -- is EV ``pin`` of the plan (the runner picks it per
    peer, as ECMP pins a flow to a path).  PlanError if the plan has none."""
    pp = plan.peers[peer]
    plan.evs_to(pp, encap)  # PlanError naming host, peer and encapsulation if there are none
    prof = pp.profiles[encap]
    if mode == "rc":
        k = pin % len(prof.evs)
        prof = replace(prof, evs=prof.evs[k:] + prof.evs[:k], spines=prof.spines[k:] + prof.spines[:k])
    return prof


def peer_profile(ctx: Any, plan: HostPlan, peer: str, encap: str, mode: str, pin: int,
                 ports: list[int]) -> int:
    """Load the plan's ``encap`` EV profile to ``peer`` into ``ctx`` (an ``mrc.ctl.MrcCtlContext``) as a
    fresh format + EXP EV profile pair, ONLINE; return its id for ``QpAttr.ev_profile_id`` (RC: rotated
    to its pin, :func:`_plan_profile`)."""
    prof = _plan_profile(plan, peer, encap, mode, pin)
    return load_profile(ctx, prof, ctx.unused_profile_id(), ports=ports).profile_id


def ev_route(plan: HostPlan, peer: str, encap: str, mode: str, pin: int) -> list[list[Any]]:
    """Per EV slot of :func:`peer_profile`'s profile: ``[peer, NIC port, spine, encap]`` (spine None where
    the plan names none).  An EV event's 8th field in the result; the runner turns it into the nodes the
    path crosses, as the simulator reports them, so the analysis can tell a retired EV on a failed
    link from a healthy one."""
    prof = _plan_profile(plan, peer, encap, mode, pin)
    return [[peer, port, prof.spines[i] if prof.spines else None, encap] for i, (_, port) in enumerate(prof.evs)]


def cc_binding(core: Any, cfg: dict[str, Any], mode: str, mtu: int) -> tuple[Any, int | None]:
    """``(QpAttr.cc, QpAttr.cc_profile_id)`` for the run's congestion control (``cc``, default NSCC for
    MRC and DCQCN for RC): NSCC (its parameters from ``nscc``, the scenario's ``traffic.nscc``) and
    ``none`` are one CC profile of ``core.ctl`` that every QP binds to; DCQCN is not an mrc_ctl
    algorithm and stays ``QpAttr.cc``."""
    cc = cfg.get("cc") or "auto"  # empty: auto here (spec.cc_for; the agent runs without the package)
    if cc == "auto":
        cc = "nscc" if mode == "mrc" else "dcqcn"
    pid = core.make_cc_profile(cc, mode=mode, mtu=mtu, nscc=cfg.get("nscc") or None)
    return (cc if pid is None else None), pid


def emit(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def _acked_bytes(f: OutFlow, mtu: int) -> int:
    """Bytes of ``f`` acknowledged so far (all messages of a flow have the same size)."""
    per = max(1, -(-f.size // mtu))
    total = 0
    for qp, s in zip(f.qps, f.start_seq, strict=True):
        n = max(0, qp.snd_una - s)
        total += (n // per) * f.size + min((n % per) * mtu, f.size)
    return min(total, f.posted * f.size)


def run(cfg: dict[str, Any], ctl: Lines) -> None:
    plan = load_plan(cfg["plan"])
    encap, mode, seed = cfg.get("encap", "srv6"), cfg["mode"], int(cfg["seed"])
    ports = [PortConfig(f"nic{p}", p, plan.ports[p].mac, plan.ports[p].next_hop_mac) for p in sorted(plan.ports)]
    with Endpoint(ports, plan.gid, encap=encap, port_rate_gbps=float(cfg["rate_gbps"]),
                  tx_delay_us=int(cfg.get("tx_delay_us", 0))) as ep:
        mtu = min(int(cfg.get("mtu") or ep.max_mtu()), ep.max_mtu())
        rng = random.Random()

        profiles: dict[str, int] = {}  # peer -> ctl EV profile id, made on first use
        routes: dict[int, list[list[Any]]] = {}  # ctl EV profile id -> per EV slot [peer, port, spine, encap]

        def profile_to(peer: str) -> int:
            if peer not in profiles:
                pin = int(cfg["rc_pin"][peer]) if mode == "rc" else 0
                profiles[peer] = pid = peer_profile(ep.ctl, plan, peer, encap, mode, pin, ep.ports)
                routes[pid] = ev_route(plan, peer, encap, mode, pin)
            return profiles[peer]

        cc, cc_pid = cc_binding(ep.core, cfg, mode, mtu)

        def attr(peer: str):
            return ep.qp_attr(mode, mtu=mtu, cc=cc, mpr=int(cfg.get("mpr", 1)), ack_timeout=int(cfg.get("ack_timeout", 16)),
                              reorder_min_ns=int(float(cfg.get("reorder_ms", 10)) * 1e6),
                              probe_interval_ns=int(float(cfg.get("probe_interval_ms", 0)) * 1e6),
                              resend_dscp=cfg["resend_dscp"], trim_ahead_after=int(cfg.get("trim_ahead", 2)),
                              ev_profile_id=profile_to(peer), cc_profile_id=cc_pid)
        inflows: dict[int, dict[str, Any]] = {}
        hello_in: dict[str, Any] = {}
        for fl in cfg["flows_in"]:
            fid = int(fl["id"])
            buf = bytearray(int(fl["size"]) * int(fl["count"]))
            va = BASE_VA + (fid << 32)
            mr = ep.reg_mr(buf, va)
            qps = [ep.create_qp(attr=attr(fl["src"])) for _ in range(int(fl["qps"]))]
            psns = [rng.getrandbits(24) for _ in qps]
            inflows[fid] = {"buf": buf, "qps": qps, "psns": psns, "size": int(fl["size"]), "src": fl["src"]}
            hello_in[str(fid)] = {"qpns": [q.qpn for q in qps], "psns": psns, "va": va, "rkey": mr.rkey}
        outflows: dict[int, OutFlow] = {}
        hello_out: dict[str, Any] = {}
        for fl in cfg["flows_out"]:
            f = OutFlow(int(fl["id"]), fl["dst"], int(fl["size"]), int(fl["count"]), int(fl["tx_depth"]))
            f.qps = [ep.create_qp(attr=attr(f.dst)) for _ in range(int(fl["qps"]))]
            f.psns = [rng.getrandbits(24) for _ in f.qps]
            f.outstanding = [0] * len(f.qps)
            outflows[f.fid] = f
            hello_out[str(f.fid)] = {"qpns": [q.qpn for q in f.qps], "psns": f.psns}
        emit({"hello": {"gid": str(ipaddress.IPv6Address(ep.gid)), "mtu": mtu, "in": hello_in, "out": hello_out}})

        con = ctl.wait(60.0)["connect"]
        gids = {h: ipaddress.IPv6Address(g).packed for h, g in con["gids"].items()}
        for fid, info in con["in"].items():  # the senders' QPs of our incoming flows
            fl = inflows[int(fid)]
            for qp, rq, rpsn, spsn in zip(fl["qps"], info["qpns"], info["psns"], fl["psns"], strict=True):
                ep.connect(qp, int(rq), gids[fl["src"]], rq_psn=int(rpsn), sq_psn=spsn)
        for fid, info in con["out"].items():  # the receivers' QPs and memory of our outgoing flows
            f = outflows[int(fid)]
            f.va, f.rkey = int(info["va"]), int(info["rkey"])
            for qp, rq, rpsn, spsn in zip(f.qps, info["qpns"], info["psns"], f.psns, strict=True):
                ep.connect(qp, int(rq), gids[f.dst], rq_psn=int(rpsn), sq_psn=spsn)
            f.start_seq = [qp.snd_una for qp in f.qps]
        emit({"ready": True})
        t0 = int(ctl.wait(60.0)["start"]["t0_ns"])
        _traffic(ep, ctl, cfg, inflows, outflows, mtu, seed, t0, routes)


def _traffic(ep: Endpoint, ctl: Lines, cfg: dict, inflows: dict, outflows: dict[int, OutFlow], mtu: int,
             seed: int, t0: int, routes: dict[int, list[list[Any]]]) -> None:
    sample_ns = int(float(cfg.get("sample_ms", 20)) * 1e6)
    progress_ns = int(float(cfg.get("progress_ms", 250)) * 1e6)
    data_cache: dict[tuple[int, int], bytes] = {}
    by_qpn = {qp.qpn: (f, i) for f in outflows.values() for i, qp in enumerate(f.qps)}
    samples: list[list] = []
    events: list = []
    errors: list[str] = []
    next_sample = next_progress = time.monotonic_ns()
    sent_reported = not outflows
    while True:
        for f in outflows.values():
            nq = len(f.qps)
            while f.posted < f.count and f.outstanding[f.posted % nq] < f.tx_depth and not errors:
                k, qi = f.posted, f.posted % nq
                data = data_cache.get((f.fid, k))
                if data is None:
                    data = data_cache[(f.fid, k)] = payload(seed, f.fid, k, f.size)
                f.post_ns[k] = time.monotonic_ns()
                ep.post_write(f.qps[qi], k, data, f.va + k * f.size, f.rkey)
                f.outstanding[qi] += 1
                f.posted += 1
        ep.progress(0.005)
        for c in ep.poll_completions():
            if c.opcode is not WcOpcode.RDMA_WRITE or c.qpn not in by_qpn:
                continue
            f, qi = by_qpn[c.qpn]
            f.outstanding[qi] -= 1
            data_cache.pop((f.fid, c.wr_id), None)
            t_post = f.post_ns.pop(c.wr_id, c.time_ns)
            if c.status is not WcStatus.SUCCESS:
                f.failed += 1
                if len(errors) < 20:
                    errors.append(f"flow {f.fid} message {c.wr_id}: {c.status.value}")
                continue
            f.done += 1
            f.lat_us.append((c.time_ns - t_post) / 1000)
            f.last_done_ns = c.time_ns
        events.extend(ep.poll_events())
        now = time.monotonic_ns()
        if now >= next_sample:
            next_sample = now + sample_ns
            samples.append([now - t0] + [_acked_bytes(f, mtu) for f in outflows.values()])
        if now >= next_progress:
            next_progress = now + progress_ns
            emit({"progress": {"t_ns": now - t0, "acked": sum(_acked_bytes(f, mtu) for f in outflows.values()),
                               "done": sum(f.done for f in outflows.values())}})
        if not sent_reported and all(f.done + f.failed >= f.count for f in outflows.values()):
            sent_reported = True
            emit({"sent": {"t_ns": now - t0}})
        msg = ctl.poll(0.0)
        if msg is not None and "stop" in msg:
            break
        if ctl.eof:
            return
    samples.append([time.monotonic_ns() - t0] + [_acked_bytes(f, mtu) for f in outflows.values()])
    events.extend(ep.poll_events())
    emit({"halted": {"done": {str(f.fid): f.done for f in outflows.values()}}})
    stop = ctl.wait(120.0)["verify"]
    emit({"result": _result(ep, cfg, inflows, outflows, samples, events, errors, stop, seed, t0, routes)})


def _slot(routes: dict[int, list[list[Any]]], profile_id: int | None, index: int) -> list[Any] | None:
    r = routes.get(profile_id) if profile_id is not None else None
    return r[index] if r is not None and 0 <= index < len(r) else None


def _result(ep: Endpoint, cfg: dict, inflows: dict, outflows: dict[int, OutFlow], samples: list, events: list,
            errors: list[str], stop: dict, seed: int, t0: int,
            routes: dict[int, list[list[Any]]]) -> dict[str, Any]:
    stats = ep.stats()
    verify: dict[str, Any] = {}
    for fid, fl in inflows.items():
        done = int(stop.get("done", {}).get(str(fid), 0))
        size, buf = fl["size"], fl["buf"]
        bad = [k for k in range(done) if buf[k * size:(k + 1) * size] != payload(seed, fid, k, size)]
        verify[str(fid)] = {"messages_checked": done, "bytes_checked": done * size, "bad_messages": bad[:20],
                            "bad_count": len(bad)}
    out_qpns = {qp.qpn for f in outflows.values() for qp in f.qps}
    in_qpns = {qp.qpn for fl in inflows.values() for qp in fl["qps"]}
    retx = {"rack": 0, "timeout": 0, "trim": 0, "nak": 0}
    extra = {"trims_received": 0, "ecn_echoes": 0, "duplicates_received": 0, "timeouts": 0, "probes_sent": 0,
             "data_packets_sent": 0, "cnps_sent": 0, "cnps_received": 0, "retx_trim_ahead": 0,
             "retx_lost_as_data": 0}
    srtt = []
    for qpn, q in stats["qps"].items():
        if qpn in out_qpns:
            for k in retx:
                retx[k] += q[f"retx_{k}"]
            for k in ("ecn_echoes", "timeouts", "data_packets_sent", "cnps_received", "retx_trim_ahead",
                      "retx_lost_as_data"):
                extra[k] += q[k]
        # every QP bound to the host's profile probes its ASSUMED_BAD EVs, the receiving ones too (review h-new2:
        # the demo's probe count left out the ~55 a second one receiving QP sent into each dead path)
        extra["probes_sent"] += q["probes_sent"]
        if qpn in in_qpns:
            extra["trims_received"] += q["trims_received"]
            extra["duplicates_received"] += q["duplicates_received"]
            extra["cnps_sent"] += q["cnps_sent"]
    for f in outflows.values():
        srtt += [qp.srtt for qp in f.qps if qp.srtt]
    verdicts = ev_verdicts(outflows, t0)
    for v in verdicts:  # one line each in the agent's log (the runner keeps it as agent-<mode>-<host>.log)
        print(f"agent {cfg['host']}: EV retired: {json.dumps(v, sort_keys=True)}", file=sys.stderr)
    late = late_deliveries(outflows, t0)
    for v in late:
        if v["held_cum_ack"]:
            print(f"agent {cfg['host']}: flow {v['flow']} held {v['delivery_ns'] / 1e6:.1f} ms by PSN {v['psn']}: "
                  f"{json.dumps(v, sort_keys=True)}", file=sys.stderr)
    return {
        "host": cfg["host"], "mode": cfg["mode"], "cc": cfg.get("cc") or "", "errors": errors,
        "cc_profile_ids": sorted({qp.attr.cc_profile_id for f in outflows.values() for qp in f.qps
                                  if qp.attr.cc_profile_id is not None}),
        "cc_state": [qp.cc.state() for f in outflows.values() for qp in f.qps if qp.cc is not None],
        "flows": {str(f.fid): {"dst": f.dst, "size": f.size, "count": f.count, "posted": f.posted, "done": f.done,
                               "failed": f.failed, "lat_us": [round(x, 1) for x in f.lat_us],
                               "last_done_ns": f.last_done_ns - t0 if f.last_done_ns else None}
                  for f in outflows.values()},
        "flow_order": [f.fid for f in outflows.values()],
        "samples": samples,
        # the 8th field: [peer, NIC port, spine, encap] of the EV (ev_route), None for a profile not ours;
        # the 9th: what the rule that made the change saw (EvEvent.evidence: durations, nothing to rebase)
        "ev_events": [[e.time_ns - t0, e.qpn, e.ev_index, e.port, e.old_state.name, e.new_state.name, e.cause,
                       _slot(routes, e.profile_id, e.ev_index), e.evidence] for e in events],
        "ev_verdicts": verdicts,
        "late_deliveries": late,
        # trimmed and duplicate arrivals at our MRC responders: [t, flow, sender QPN, our QPN, kind, PSN, EV index]
        "rx_log": [[t - t0, fid, qp.remote.qpn, qp.qpn, kind, psn, evi] for fid, fl in inflows.items()
                   for qp in fl["qps"] for t, kind, psn, evi in getattr(qp.responder, "rx_log", ())],
        "link_events": [[e.time_ns - t0, e.port, e.up] for e in ep.link_events],
        "retx": retx, "counters": extra, "srtt_ns": sorted(srtt), "verify": verify,
        "driver": stats["driver"],
    }


_VERDICT_TIMES = ("t_ns", "sent_ns", "ev_rack_ts_ns", "ev_trim_ts_ns", "rack_ts_ns", "retired_ns", "suspect_ns",
                  "probe_sent_ns")


def _qp_records(outflows: dict[int, OutFlow], t0: int, attr: str, times: tuple[str, ...]) -> list[dict[str, Any]]:
    """The records our QPs' requesters keep in ``attr``, each with the flow, QP and peer QP, its
    ``times`` (ns since boot) made run-relative (since t0); durations stay as they are (ns)."""
    out = []
    for f in outflows.values():
        for qp in f.qps:
            for v in getattr(qp.requester, attr, ()):
                d = {k: (x - t0 if k in times and isinstance(x, int) and x >= 0 else x) for k, x in v.items()}
                d.update(flow=f.fid, dst=f.dst, qpn=qp.qpn, peer_qpn=qp.remote.qpn)
                out.append(d)
    return out


def late_deliveries(outflows: dict[int, OutFlow], t0: int) -> list[dict[str, Any]]:
    """Packets our QPs saw delivered ``Requester.LATE_SRTTS`` srtts or more after their first send
    (``Requester.late``: each with its resends, their causes and the EVs of the copies resent), in
    delivery order."""
    return sorted(_qp_records(outflows, t0, "late", ("first_sent_ns", "t_ns")), key=lambda d: d["t_ns"])


def ev_verdicts(outflows: dict[int, OutFlow], t0: int) -> list[dict[str, Any]]:
    """The EV retirements our QPs decided (``MrcRequester.verdicts``: the verdict and its evidence), in
    the order they were decided."""
    return sorted(_qp_records(outflows, t0, "verdicts", _VERDICT_TIMES),
                  key=lambda d: d.get("retired_ns") or d.get("t_ns") or 0)


def main() -> int:
    ctl = Lines(sys.stdin.fileno())
    cfg = ctl.wait(60.0)["config"]
    try:
        run(cfg, ctl)
    except Exception as e:
        emit({"error": f"{type(e).__name__}: {e}"})
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main())
