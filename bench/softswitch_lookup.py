"""Microbenchmark of softswitch table lookups (the per-packet hot path of the runtime state).

Prints lookups/s for an exact, an LPM and a ternary+range table filled over P4Runtime writes,
next to a plain ``dict.get`` measured in the same run (the ratio is what to compare across
machines). Run: ``python bench/softswitch_lookup.py [--entries N] [--seconds S]``.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

from google.protobuf import text_format
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from softswitch.runtime import SwitchState

P4INFO = Path(__file__).resolve().parent.parent / "tests/softswitch/runtime/data/p4info_features.p4info.txtpb"


def _b(v: int) -> bytes:
    return v.to_bytes(max(1, (v.bit_length() + 7) // 8), "big")


def _ids(p4info: p4info_pb2.P4Info) -> dict[str, int]:
    return {o.preamble.name: o.preamble.id for kind in ("tables", "actions", "action_profiles")
            for o in getattr(p4info, kind)}


def build(n: int, rnd: random.Random) -> tuple[SwitchState, dict[str, list[tuple]]]:
    p4info = text_format.Parse(P4INFO.read_text(), p4info_pb2.P4Info())
    for t in p4info.tables:
        t.size = 0  # unlimited for the benchmark
    ids = _ids(p4info)
    st = SwitchState(p4info)
    I = p4runtime_pb2.Update.INSERT

    def write(te):
        st.write(p4runtime_pb2.Update(type=I, entity=p4runtime_pb2.Entity(table_entry=te)))

    keys: dict[str, list[tuple]] = {"exact": [], "lpm": [], "ternary": []}
    seen: set[tuple] = set()
    # exact: l2 (48-bit MAC)
    for i in range(n):
        mac = rnd.getrandbits(48)
        te = p4runtime_pb2.TableEntry(table_id=ids["MyIngress.l2"])
        te.match.add(field_id=1).exact.value = _b(mac)
        te.action.action.action_id = ids["MyIngress.set_port"]
        te.action.action.params.add(param_id=1, value=_b(mac))
        te.action.action.params.add(param_id=2, value=_b(i % 512))
        if (mac,) in seen:
            continue
        seen.add((mac,))
        write(te)
        keys["exact"].append((mac,))
    # lpm: route_v6 (128-bit) with one-shot members; prefixes /32.. /64 under 2001:db8::/32
    prof_member = p4runtime_pb2.ActionProfileMember(action_profile_id=ids["MyIngress.ecmp_selector"], member_id=1)
    prof_member.action.action_id = ids["MyIngress.ingress.nexthop"]
    prof_member.action.params.add(param_id=1, value=b"\x01")
    st.write(p4runtime_pb2.Update(type=I, entity=p4runtime_pb2.Entity(action_profile_member=prof_member)))
    base = 0x20010DB8 << 96
    for _ in range(n):
        plen = rnd.choice([32, 40, 48, 56, 64])
        addr = base | (rnd.getrandbits(plen - 32) << (128 - plen)) if plen > 32 else base
        te = p4runtime_pb2.TableEntry(table_id=ids["MyIngress.route_v6"])
        fm = te.match.add(field_id=1)
        fm.lpm.value, fm.lpm.prefix_len = _b(addr), plen
        te.action.action_profile_member_id = 1
        if (addr, plen) in seen:
            continue
        seen.add((addr, plen))
        write(te)
        keys["lpm"].append((addr | rnd.getrandbits(128 - plen),))
    # ternary + range: acl
    for i in range(n):
        te = p4runtime_pb2.TableEntry(table_id=ids["MyIngress.acl"], priority=i + 1)
        m = rnd.choice([0xFF, 0xF0])
        fm = te.match.add(field_id=1)
        fm.ternary.value, fm.ternary.mask = _b(rnd.getrandbits(8) & m), _b(m)
        lo = rnd.randrange(0, 60000)
        fm = te.match.add(field_id=2)
        fm.range.low, fm.range.high = _b(lo), _b(lo + 1000)
        te.action.action.action_id = ids["MyIngress.acl_deny"]
        write(te)
        keys["ternary"].append((rnd.getrandbits(8), rnd.randrange(65536), 0, 0x86DD))
    return st, keys


def rate(fn, keys: list[tuple], seconds: float) -> float:
    n = 0
    ks = keys * max(1, 10000 // max(1, len(keys)))
    t0 = time.perf_counter()
    deadline = t0 + seconds
    while True:
        for k in ks:
            fn(k)
        n += len(ks)
        t = time.perf_counter()
        if t >= deadline:
            return n / (t - t0)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=100, help="entries per table (default 100)")
    ap.add_argument("--seconds", type=float, default=1.0, help="time per measurement (default 1 s)")
    args = ap.parse_args(argv)
    rnd = random.Random(1)
    st, keys = build(args.entries, rnd)
    plain = {k: (1, (2, 3), None) for k in keys["exact"]}
    base = rate(plain.get, keys["exact"], args.seconds)
    print(f"python {sys.version.split()[0]}, {args.entries} entries per table, {args.seconds:.1f} s per run")
    print(f"{'baseline dict.get':<26}{base:>14,.0f} lookups/s   ratio 1.00")
    for label, table, ks in (("exact (l2, 48 bit)", "MyIngress.l2", keys["exact"]),
                             ("lpm (route_v6, 128 bit)", "MyIngress.route_v6", keys["lpm"]),
                             ("ternary+range (acl)", "MyIngress.acl", keys["ternary"])):
        r = rate(st.table(table).lookup, ks, args.seconds)
        print(f"{label:<26}{r:>14,.0f} lookups/s   ratio {r / base:.2f}")


if __name__ == "__main__":
    main()
