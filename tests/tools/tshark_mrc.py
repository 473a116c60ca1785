"""Shared by the dissector tests: run tshark with tools/wireshark/mrc.lua, and say what the project's
codec reads in the same frames, field by field, under the dissector's filter names."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

from mrc.wire import formats as F
from mrc.wire.codec import WireError, decode_frame

REPO = Path(__file__).resolve().parents[2]
LUA = REPO / "tools" / "wireshark" / "mrc.lua"
TSHARK = shutil.which("tshark")

# Every field compared, by packet kind (the dissector's names).
FIELDS = [
    "frame.number", "mrc.trimmed", "mrc.dscp", "mrc.bth.opcode", "mrc.bth.destqp", "mrc.bth.psn",
    "mrc.reth.va", "mrc.reth.rkey", "mrc.reth.dmalen", "mrc.immdt", "mrc.payload_len",
    "mrc.usid.block", "mrc.usid.id",
    "mrc.telemetry.hop_count", "mrc.telemetry.max_hops", "mrc.telemetry.hop.switch_id",
    "mrc.telemetry.hop.ingress_port", "mrc.telemetry.hop.egress_port", "mrc.telemetry.hop.ingress_ts_us",
    "mrc.telemetry.hop.hop_latency_us", "mrc.telemetry.hop.queue_depth", "mrc.telemetry.hop.queue_id",
    "mrc.aeth.syndrome", "mrc.aeth.msn",
    "mrc.sack.flags", "mrc.sack.cum_psn", "mrc.sack.sack_base", "mrc.sack.trigger_psn",
    "mrc.sack.service_time_ns", "mrc.sack.received_bytes", "mrc.sack.ev_echo", "mrc.sack.bitmap",
    "mrc.sack.ecn_psn", "mrc.sack.trim_psn",
    "mrc.probe.response", "mrc.probe.req_id", "mrc.probe.flags", "mrc.probe.port", "mrc.probe.sender_ts_ns",
    "mrc.probe.service_time_ns", "mrc.probe.ev_echo",
    "mrc.port_status.req_id", "mrc.port_status.n_ports", "mrc.port_status.up_mask",
]


def tshark_cmd(*args: str) -> list[str]:
    """tshark with the dissector loaded from the repository."""
    assert TSHARK is not None
    return [TSHARK, "-X", f"lua_script:{LUA}", *args]


def tshark_fields(pcap: Path, display_filter: str = "") -> list[dict[str, list[int]]]:
    """One dict per shown frame: field -> list of values (ints; booleans as 0/1)."""
    cmd = tshark_cmd("-r", str(pcap), "-T", "fields", "-E", "separator=|", "-E", "occurrence=a",
                     "-E", "aggregator=,", *[a for f in FIELDS for a in ("-e", f)])
    if display_filter:
        cmd += ["-Y", display_filter]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True).stdout
    rows = []
    for line in out.splitlines():
        vals = line.split("|")
        row: dict[str, list[int]] = {}
        for name, v in zip(FIELDS, vals, strict=True):
            row[name] = [_int(x, name) for x in v.split(",")] if v else []
        rows.append(row)
    return rows


def _int(text: str, name: str) -> int:
    t = text.strip()
    if t in ("True", "False"):
        return int(t == "True")
    if name == "mrc.sack.bitmap":
        return int(t.replace(":", ""), 16)
    return int(t, 0)


def codec_fields(frame: bytes) -> dict[str, list[int]] | None:
    """What ``mrc.wire.codec`` reads in ``frame``, under the dissector's names (None: not MRC)."""
    try:
        fr = decode_frame(frame)
    except WireError:
        return None
    out: dict[str, list[int]] = {k: [] for k in FIELDS if k != "frame.number"}
    out["mrc.trimmed"] = [1] if fr.trimmed else []
    out["mrc.dscp"] = [fr.dscp]
    out["mrc.bth.opcode"], out["mrc.bth.destqp"], out["mrc.bth.psn"] = [fr.opcode], [fr.dest_qp], [fr.psn]
    if fr.outer_dst is not None:
        out["mrc.usid.block"] = [int.from_bytes(fr.outer_dst[:4], "big")]
        usids = [int.from_bytes(fr.outer_dst[4 + 2 * i:6 + 2 * i], "big") for i in range(6)]
        while usids and usids[-1] == 0:  # up to the last non-zero uSID (RFC 9800's Argument rule)
            usids.pop()
        out["mrc.usid.id"] = usids
    if fr.telemetry_off >= 0:
        count, recs = fr.telemetry()
        out["mrc.telemetry.hop_count"] = [count]
        out["mrc.telemetry.max_hops"] = [fr.raw[fr.telemetry_off + 4]]
        for name, attr in (("switch_id", "switch_id"), ("ingress_port", "ingress_port"),
                           ("egress_port", "egress_port"), ("ingress_ts_us", "ingress_ts_us"),
                           ("hop_latency_us", "hop_latency_us"), ("queue_depth", "queue_depth"),
                           ("queue_id", "queue_id")):
            out[f"mrc.telemetry.hop.{name}"] = [getattr(r, attr) for r in recs]
    if fr.opcode in F.DATA_OPCODES:
        out["mrc.reth.va"], out["mrc.reth.rkey"], out["mrc.reth.dmalen"] = [fr.va], [fr.rkey], [fr.dma_len]
        if fr.imm is not None:
            out["mrc.immdt"] = [fr.imm]
        out["mrc.payload_len"] = [len(fr.payload)]
    if fr.opcode == F.OP_ACK:
        out["mrc.aeth.syndrome"], out["mrc.aeth.msn"] = [fr.syndrome], [fr.msn]
    if fr.sack is not None:
        s = fr.sack
        out.update({"mrc.sack.flags": [s.flags], "mrc.sack.cum_psn": [s.cum_psn],
                    "mrc.sack.sack_base": [s.sack_base], "mrc.sack.trigger_psn": [s.trigger_psn],
                    "mrc.sack.service_time_ns": [s.service_time_ns], "mrc.sack.received_bytes": [s.received_bytes],
                    "mrc.sack.ev_echo": [s.ev_echo], "mrc.sack.bitmap": [s.bitmap],
                    "mrc.sack.ecn_psn": list(s.ecn_psns), "mrc.sack.trim_psn": list(s.trim_psns)})
    if fr.probe is not None:
        p = fr.probe
        out.update({"mrc.probe.response": [int(fr.opcode == F.OP_PROBE_RESP)], "mrc.probe.req_id": [p.req_id],
                    "mrc.probe.flags": [p.flags], "mrc.probe.port": [p.port],
                    "mrc.probe.sender_ts_ns": [p.sender_ts_ns], "mrc.probe.service_time_ns": [p.service_time_ns],
                    "mrc.probe.ev_echo": [p.ev_echo]})
    if fr.port_status is not None:
        ps = fr.port_status
        out.update({"mrc.port_status.req_id": [ps.req_id], "mrc.port_status.n_ports": [ps.n_ports],
                    "mrc.port_status.up_mask": [ps.up_mask]})
    return out


def kind(fields: dict[str, Any]) -> str:
    """The packet kind of a codec_fields() dict: data, trimmed, sack, ack, probe, port_status."""
    op = fields["mrc.bth.opcode"][0]
    if fields["mrc.trimmed"] == [1]:
        return "trimmed"
    if op in F.DATA_OPCODES:
        return "data"
    if op == F.OP_ACK:
        return "sack" if fields["mrc.sack.flags"] else "ack"
    if op in (F.OP_PROBE_REQ, F.OP_PROBE_RESP):
        return "probe"
    return "port_status"


def compare(frames: list[bytes], rows: list[dict[str, list[int]]]) -> dict[str, int]:
    """Assert tshark's fields equal the codec's for every MRC frame; returns frames per kind."""
    by_num = {r["frame.number"][0]: r for r in rows}
    kinds: dict[str, int] = {}
    for i, raw in enumerate(frames, start=1):
        want = codec_fields(raw)
        got = by_num.get(i)
        if want is None:
            continue
        assert got is not None, f"frame {i}: the codec decodes it, tshark shows no MRC fields"
        k = kind(want)
        if want["mrc.telemetry.hop_count"]:
            k_tel = "telemetry"
            kinds[k_tel] = kinds.get(k_tel, 0) + 1
        kinds[k] = kinds.get(k, 0) + 1
        diff = {f: (want[f], got[f]) for f in want if want[f] != got[f]}
        assert not diff, f"frame {i} ({k}): codec != tshark for {diff}"
    return kinds


def text_png(text: str, path: Path, title: str = "") -> Path:
    """Render monospace text (a tshark decode) as a PNG, for the docs' picture of a decoded capture."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lines = text.splitlines()
    width = max(len(x) for x in lines)
    fig = plt.figure(figsize=(max(6.0, width * 0.075), 0.4 + len(lines) * 0.158), dpi=110)
    fig.text(0.01, 0.99, (title + "\n" if title else "") + text, family="monospace", fontsize=8.5, va="top")
    fig.savefig(path, facecolor="white")
    plt.close(fig)
    return path


def docs_capture(pcap: Path, frames: list[bytes], repo: Path) -> None:
    """With MRC_DOCS_IMG=1: keep one frame of every kind as tools/wireshark/mrc-sample.pcapng and draw
    docs/img/tshark-mrc.png (the packet list, then one data packet's MRC tree with its hop records)."""
    firsts: dict[str, int] = {}
    for i, raw in enumerate(frames, start=1):
        f = codec_fields(raw)
        if f is None:
            continue
        k = kind(f)
        if k == "data" and len(f["mrc.telemetry.hop.switch_id"]) >= 3:
            k = "data3"
        if k == "sack" and f["mrc.sack.trim_psn"]:
            k = "sack_trim"
        firsts.setdefault(k, i)
    nums = sorted(firsts.values())
    sample = repo / "tools" / "wireshark" / "mrc-sample.pcapng"
    subprocess.run(tshark_cmd("-r", str(pcap), "-Y", " || ".join(f"frame.number == {n}" for n in nums),
                              "-w", str(sample)), check=True, timeout=120, capture_output=True)
    listing = subprocess.run(tshark_cmd("-r", str(sample)), capture_output=True, text=True, check=True,
                             timeout=60).stdout
    detail_frame = nums.index(firsts.get("data3") or firsts["data"]) + 1
    detail = subprocess.run(tshark_cmd("-r", str(sample), "-O", "mrc", "-Y", f"frame.number == {detail_frame}"),
                            capture_output=True, text=True, check=True, timeout=60).stdout
    keep = [ln for ln in detail.splitlines() if ln.startswith(("Multipath", "    ")) and "[Expert" not in ln]
    text_png("$ tshark -X lua_script:tools/wireshark/mrc.lua -r tools/wireshark/mrc-sample.pcapng\n"
             + listing.rstrip() + f"\n\n$ tshark ... -O mrc -Y 'frame.number == {detail_frame}'\n" + "\n".join(keep),
             repo / "docs" / "img" / "tshark-mrc.png")
