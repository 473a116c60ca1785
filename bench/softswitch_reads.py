"""CPU a softswitch spends answering the controller's counter poll, from entry encodings (the default)
against building protobuf messages (``encoded_reads=False``, the path until 2026-12-07), in one run.

The switch runs ``p4src/mrc_switch.p4`` in this process (its packet loop running, the switch process's
0.5 ms GIL switch interval) as leaf p1l1 of a one-plane Clos of ``--spines`` spines, holding what the
controller writes there in EV-direct mode (with 3 spines the EV map is 256 ternary rows, each with a
direct counter); every direct counter and counter cell is given a count.  The poll is the controller's
(``controller/telemetry.py``): port rx/tx counters at the leaf's ports and the CPU port by index, the
drop-reason and congestion counters whole, the direct counters of each table.  A client in a child
process sends ``--reads`` such Reads per round, alternating the two paths for ``--rounds`` rounds; this
the CPU time of the server's worker threads (``p4rt*``: the Read handler, gRPC's sending of its
responses) over a round is the Read's; the whole process's is printed beside it (it also holds gRPC's
C threads, the loop and the probe below, running all the time).  The entries' encodings are made
before the rounds: the first encoded Read after writes makes them (``--split`` times that one).

While the Reads run a probe thread asks the loop to run a no-op every 2 ms (``PacketLoop.call``) and
times the round trip: the longest (and the 99th percentile) is how long the loop could not run under
the Reads -- waiting for the GIL, or for a core on a loaded machine (the idle figure is that alone).  ``--split`` adds where the message path's CPU goes (building entities, copying them into the
ReadResponse, serializing), timed in this thread without gRPC.

    python bench/softswitch_reads.py [--spines 3] [--reads 20] [--rounds 3] [--split]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from p4.v1 import p4runtime_pb2 as pb

from controller import build_plan
from controller.mapping import P4Names, desired_state
from controller.p4contract import CPU_PORT, T_INGRESS_ROUTING_EV_DIRECT
from controller.telemetry import poll_entities
from controller.topogen import clos
from mrc_fabric.targets import DEFAULT_PROGRAM
from softswitch.engine.loop import GIL_SWITCH_INTERVAL_S
from softswitch.runtime.counters import pack_cell

# the client: send one ReadRequest (a file) n times, every response read; print entities and bytes
CLIENT = """
import sys, grpc
from p4.v1 import p4runtime_pb2 as pb
addr, path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
req = open(path, 'rb').read()
with grpc.insecure_channel(addr) as ch:
    read = ch.unary_stream('/p4.v1.P4Runtime/Read', request_serializer=None, response_deserializer=None)
    size = ents = 0
    for _ in range(n):
        for raw in read(req, timeout=60):
            size += len(raw)
            ents += len(pb.ReadResponse.FromString(raw).entities)
print(ents // n, size // n)
"""


def poll_request(names: P4Names, ports: list[int]) -> pb.ReadRequest:
    """The controller's counter poll of a switch (``TelemetryCollector.poll``), as one ReadRequest."""
    return pb.ReadRequest(device_id=1, entities=poll_entities(names, set(ports))[1])


def give_counts(state) -> None:
    """A count in every direct counter and counter cell (traffic's, of every varint length)."""
    n = 0
    for t in state.tables.values():
        if t.direct_counter is not None:
            for e in [*t.entries(), t.default_entry]:
                n += 1
                e.cnt = pack_cell((n * 7919) % 10**9, (n * 13) % 10**6)
    for c in state.counters.values():
        c.cells[:] = [pack_cell((i * 1499) % 10**8, i % 5000) for i in range(c.size)]


def split(state, req: pb.ReadRequest, reps: int = 5) -> dict[str, float]:
    """Thread CPU (ms per poll) of the message path's steps and of the encoded path, no gRPC."""
    from softswitch.p4rt.reads import answer, read_units
    from softswitch.p4rt.server import _read_response

    units = [u for ent in req.entities for u in read_units(state, ent)]
    c0 = time.thread_time()
    _read_response([x for u in units for x in answer(state, u, True)], True)  # keeps the entries' encodings
    first = (time.thread_time() - c0) * 1e3
    t = {"build entities (state.read)": 0.0, "copy into ReadResponse": 0.0, "serialize": 0.0,
         "encoded (read_wire, join)": 0.0, "encoded, first after writes": first}
    for _ in range(reps):
        c0 = time.thread_time()
        ents = [x for u in units for x in answer(state, u, False)]
        c1 = time.thread_time()
        resp = pb.ReadResponse(entities=ents)
        c2 = time.thread_time()
        resp.SerializeToString()
        c3 = time.thread_time()
        _read_response([x for u in units for x in answer(state, u, True)], True)
        c4 = time.thread_time()
        for k, d in zip(t, (c1 - c0, c2 - c1, c3 - c2, c4 - c3), strict=False):
            t[k] += d * 1e3 / reps
    return t


def thread_cpu(prefix: str) -> dict[int, float]:
    """CPU seconds of each live thread of this process whose name starts with ``prefix``."""
    out = {}
    for th in threading.enumerate():
        if th.name.startswith(prefix) and th.ident is not None:
            try:
                out[th.ident] = time.clock_gettime(time.pthread_getcpuclockid(th.ident))
            except (OSError, ProcessLookupError):
                pass  # ended meanwhile
    return out


def cpu_since(before: dict[int, float], prefix: str) -> float:
    """CPU the ``prefix`` threads used since ``before`` (a thread that ended meanwhile is missed: the
    server's pool keeps its threads)."""
    now = thread_cpu(prefix)
    return sum(v - before.get(k, 0.0) for k, v in now.items())


class LoopProbe:
    """Times ``loop.call`` of a no-op every 2 ms from its own thread; ``worst()`` the longest (ms)."""

    def __init__(self, loop) -> None:
        self.loop = loop
        self.times: list[float] = []
        self._stop = threading.Event()
        self._th = threading.Thread(target=self._run, name="loop-probe", daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            t0 = time.perf_counter()
            self.loop.call(lambda: None, timeout=30)
            self.times.append((time.perf_counter() - t0) * 1e3)
            self._stop.wait(0.002)

    def __enter__(self):
        self._th.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._th.join(30)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spines", type=int, default=3, help="spines of the Clos (3: a 256-row EV map)")
    ap.add_argument("--hosts", type=int, default=2, help="hosts per leaf")
    ap.add_argument("--reads", type=int, default=20, help="Reads per round")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of each path, alternating")
    ap.add_argument("--split", action="store_true", help="also time the message path's steps")
    args = ap.parse_args()
    if not (1 <= args.reads <= 1000 and 1 <= args.rounds <= 20):
        ap.error("--reads must be 1..1000 and --rounds 1..20")

    from controller.p4rt import P4RuntimeClient
    from softswitch.api import SoftSwitch

    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)  # as in a switch process
    plan = build_plan(clos(1, args.spines, 2, args.hosts))
    sp = plan.switches["p1l1"]
    ports = list(range(1, args.spines + args.hosts + 1))
    with SoftSwitch(DEFAULT_PROGRAM, cpu_port=CPU_PORT, include_dirs=[str(DEFAULT_PROGRAM.parent)]) as sw, \
            tempfile.TemporaryDirectory(prefix="softswitch-reads-") as tmp:
        client = P4RuntimeClient(sw.grpc_addr, 1, election_id=1)
        try:
            info = client.get_p4info()
            names = P4Names.from_p4info(info)
            d = desired_state(names, sp, stev_mode="ev_direct")
            client.write_updates([pb.Update(type=pb.Update.MODIFY if e in d.defaults else pb.Update.INSERT,
                                            entity=e) for e in d.all()])
        finally:
            client.close()
        srv = sw.switch.server
        state = srv._pipeline.state
        sw.switch.loop.call(lambda: give_counts(state))
        req = poll_request(names, ports)
        path = Path(tmp) / "poll.bin"
        path.write_bytes(req.SerializeToString())
        ev = state.table(T_INGRESS_ROUTING_EV_DIRECT)
        print(f"leaf p1l1 of {args.spines} spines: {len(ev)} EV-map rows, a poll of {len(req.entities)} "
              f"requested entities")
        if args.split:
            print("  where a poll's CPU goes, ms (thread CPU, no gRPC):")
            for k, v in split(state, req).items():
                print(f"    {k:30s} {v:8.2f}")
        res: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
        idle: list[float] = []
        # the first encoded Read keeps the entries' encodings (``--split`` times it): not in the rounds
        state.read_wire(pb.Entity(table_entry=pb.TableEntry()))
        with LoopProbe(sw.switch.loop) as probe:
            time.sleep(0.5)
            idle = list(probe.times)
            for r in range(args.rounds):
                for encoded in (False, True):
                    srv.encoded_reads = encoded
                    n0 = len(probe.times)
                    c0, t0 = time.process_time(), thread_cpu("p4rt")
                    out = subprocess.run([sys.executable, "-c", CLIENT, sw.grpc_addr, str(path), str(args.reads)],
                                         capture_output=True, text=True, timeout=600, check=True,
                                         env={**os.environ, "PYTHONPATH": str(ROOT)})
                    proc = time.process_time() - c0
                    cpu = cpu_since(t0, "p4rt")
                    ents, size = map(int, out.stdout.split())
                    waits = sorted(probe.times[n0:]) or [0.0]
                    worst, p99 = waits[-1], waits[int(0.99 * (len(waits) - 1))]
                    res[encoded].append((cpu * 1e3 / args.reads, worst))
                    print(f"  round {r + 1} {'encoded' if encoded else 'messages':8s}: server threads "
                          f"{cpu * 1e3 / args.reads:6.2f} ms CPU per poll = {cpu * 1e6 / args.reads / ents:6.1f} us per "
                          f"entity ({ents} entities, {size} bytes; whole process {proc * 1e3 / args.reads:6.2f} ms); "
                          f"loop wait p99 {p99:5.1f} ms, longest {worst:5.1f} ms")
        srv.encoded_reads = True
    msg = statistics.median(c for c, _ in res[False])
    enc = statistics.median(c for c, _ in res[True])
    print(f"median server-thread CPU per poll: messages {msg:.2f} ms, encoded {enc:.2f} ms: {msg / enc:.1f}x less")
    print(f"longest loop wait under the Reads: messages {max(w for _, w in res[False]):.1f} ms, encoded "
          f"{max(w for _, w in res[True]):.1f} ms (idle: {max(idle, default=0.0):.1f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
