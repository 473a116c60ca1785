"""No-root units: EV plan files (as the controller writes them), bootstrap addresses, CLI errors."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from mrc.cli import build_parser, main
from mrc.endpoint import PlanError, direct_evs, load_plan, parse_plan
from mrc.endpoint.bootstrap import Listener, connect, parse_address
from mrc.endpoint.perf import percentile


@pytest.fixture
def controller_plans(tmp_path):
    from controller.evplan import write_ev_files
    from controller.plan import build_plan
    from controller.topogen import clos

    plan = build_plan(clos(2, 2, 2, 1))
    return write_ev_files(plan, tmp_path / "y") + write_ev_files(plan, tmp_path / "j", fmt="json")


def test_loads_controller_plans(controller_plans):
    for path in controller_plans:
        hp = load_plan(path)
        assert sorted(hp.ports) == [1, 2] and all(p.mac and p.next_hop_mac for p in hp.ports.values())
        (peer,) = hp.peers.values()
        assert hp.peer_by_gid(peer.gid) is peer
        srv6, stev, udp = (hp.evs_to(peer, e) for e in ("srv6", "stev", "udp"))
        assert len(srv6) == len(stev) == len(udp) == 4  # 2 planes x 2 spines
        assert {p for _, p in srv6} == {1, 2}
        assert all(isinstance(ev, bytes) and len(ev) == 16 for ev, _ in srv6)
        assert all(isinstance(ev, int) and ev >> 16 == sport for (ev, _), (sport, _) in zip(stev, udp, strict=True))


def test_plan_errors_name_the_field(tmp_path, controller_plans):
    data = yaml.safe_load(controller_plans[0].read_text())
    peer = next(iter(data["peers"]))
    data["peers"][peer]["profiles"]["srv6"]["evs"][1]["ev"] = "zz"
    with pytest.raises(PlanError, match=rf"peers\.{peer}\.profiles\.srv6\.evs\[1\]\.ev: not hex"):
        parse_plan(data)
    data = yaml.safe_load(controller_plans[0].read_text())
    data["ports"][1]["leaf_mac"] = "nope"
    with pytest.raises(PlanError, match=r"ports\.1: bad MAC"):
        parse_plan(data)
    with pytest.raises(PlanError, match="gid"):
        parse_plan({"host": "h", "gid": "x"})
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(PlanError, match="not valid JSON"):
        load_plan(bad)
    with pytest.raises(PlanError, match="No such file"):
        load_plan(tmp_path / "missing.yaml")
    hp = parse_plan({"host": "h", "gid": "fd00::1", "peers": {}})
    with pytest.raises(PlanError, match="no peer with GID fd00::2"):
        hp.peer_by_gid(bytes.fromhex("fd00" + "00" * 13 + "02"))


def test_plan_files_that_are_not_what_they_claim_are_one_line_errors(tmp_path, controller_plans):
    """A non-UTF-8 byte was reported without the file's name; a YAML syntax error spanned five lines naming
    "<unicode string>"; a key given twice (YAML or JSON) let the last one win; profiles that are no mapping
    were an AttributeError traceback."""
    good = controller_plans[0].read_text()
    f = tmp_path / "p.yaml"
    f.write_bytes(good.encode().replace(b"host: ", b"host: \xff", 1))
    with pytest.raises(PlanError, match=rf"^{f}:1:7: not UTF-8 text \(byte 0xff at offset 6\); save the file as UTF-8$"):
        load_plan(f)
    f.write_text("host: h1\npeers: [\n  a: b\n")
    with pytest.raises(PlanError) as ei:
        load_plan(f)
    assert "\n" not in str(ei.value) and str(ei.value).startswith(f"{f}:4:1: not valid YAML: expected ',' or ']'")
    f.write_text(good + "host: h9\n")
    with pytest.raises(PlanError, match=r"p.yaml:\d+:1: not valid YAML: duplicate key 'host' \(first at line 1\)"):
        load_plan(f)
    j = tmp_path / "p.json"
    j.write_text('{"host": "h1", "gid": "fd00::1",\n "host": "h2"}')
    with pytest.raises(PlanError, match=rf"^{j}: not valid JSON: duplicate key 'host'"):
        load_plan(j)
    j.write_text('{"host": "h1",\n  "gid": }')
    with pytest.raises(PlanError, match=rf"^{j}:2:10: not valid JSON: Expecting value"):
        load_plan(j)
    with pytest.raises(PlanError, match=r"plan.peers.h2.profiles: expected a mapping"):
        parse_plan({"host": "h1", "gid": "fd00::1", "peers": {"h2": {"gid": "fd00::2", "profiles": [1]}}})
    assert load_plan(controller_plans[0]).host  # the controller's own files still read


def test_direct_evs_alternate_ports_and_are_distinct():
    for enc in ("srv6", "stev", "udp"):
        evs = direct_evs(enc, [1, 2, 3], 2)
        assert [p for _, p in evs] == [1, 2, 3, 1, 2, 3]
        assert len({ev for ev, _ in evs}) == 6
    with pytest.raises(ValueError):
        direct_evs("ipv4", [1])


def test_bootstrap_addresses_and_exchange(tmp_path):
    assert str(parse_address("10.0.0.1")) == "10.0.0.1:18515"
    assert str(parse_address("[fd00::1]:7")) == "[fd00::1]:7"
    assert parse_address("unix:/tmp/x").path == "/tmp/x"
    for bad in ("unix:", "[fd00::1", "h:99999", "h:x"):
        with pytest.raises(ValueError):
            parse_address(bad)
    addr = parse_address(f"unix:{tmp_path / 's'}")
    lst = Listener(addr)
    try:
        cli = connect(addr, 5)
        srv = lst.accept(5)
        cli.send({"hello": 1})
        assert srv.recv(5) == {"hello": 1}
        srv.send({"error": "no"})
        with pytest.raises(ConnectionError, match="peer: no"):
            cli.recv(5)
        cli.close()
        srv.close()
    finally:
        lst.close()


def test_percentile_nearest_rank():
    v = sorted(float(i) for i in range(1, 1001))
    assert (percentile(v, 0.5), percentile(v, 0.99), percentile(v, 0.999)) == (500.0, 990.0, 999.0)
    assert percentile([], 0.5) == 0.0


def test_cli_help_and_errors(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0
    assert "ib_write_bw" in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        main(["client", "--ifaces", "a", "--peer", "x", "--size", "12Q"])
    assert e.value.code == 2 and "bad size" in capsys.readouterr().err
    a = build_parser().parse_args(["client", "--ifaces", "2@eth9,1@eth8", "--peer", "h", "--size", "64M"])
    assert a.ifaces == [(2, "eth9"), (1, "eth8")] and a.size == 64 << 20
    assert main(["client", "--ifaces", "a,b", "--peer", "h", "--next-hop-macs", "02:00:00:00:00:01"]) == 2
    assert "2 interfaces" in capsys.readouterr().err
    assert main(["server", "--ifaces", "a", "--plan", "/nonexistent/plan.yaml"]) == 2
    assert "nonexistent" in capsys.readouterr().err
    # --resend-dscp: a DSCP or none, into the client's QP attributes
    from mrc.cli import perf_params
    from mrc.wire import formats as F

    assert perf_params(build_parser().parse_args(["client", "--ifaces", "a", "--peer", "h"])).resend_dscp == F.DSCP_RESEND
    for text, want in (("none", None), ("46", 46), ("0x22", 34)):
        a = build_parser().parse_args(["client", "--ifaces", "a", "--peer", "h", "--resend-dscp", text])
        assert perf_params(a).resend_dscp == want
    with pytest.raises(SystemExit) as e:
        main(["client", "--ifaces", "a", "--peer", "x", "--resend-dscp", "64"])
    assert e.value.code == 2 and "DSCP 64 is not in 0-63" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:  # DSCP 11 is the trimmed mark
        main(["client", "--ifaces", "a", "--peer", "x", "--resend-dscp", "11"])
    assert e.value.code == 2 and "marks a trimmed packet" in capsys.readouterr().err
    # --rate-gbps nan/inf passed the '<= 0' check; --accept-timeout -1 waited forever; a --bootstrap host that
    # does not resolve was a socket.gaierror traceback
    for bad in ("nan", "inf"):
        assert main(["client", "--ifaces", "lo", "--peer", "h", "--rate-gbps", bad]) == 2
        assert f"--rate-gbps must be positive and finite, got {bad}" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["client", "--ifaces", "lo,2@lo", "--peer", "h"])
    assert e.value.code == 2 and "interface(s) lo given twice" in capsys.readouterr().err
    assert main(["server", "--ifaces", "lo", "--accept-timeout", "-1"]) == 2
    assert "--accept-timeout must be 0 (wait forever) or more seconds" in capsys.readouterr().err
    assert main(["server", "--ifaces", "lo", "--bootstrap", "no-such-host.invalid:1"]) == 2
    assert "cannot listen on no-such-host.invalid:1" in capsys.readouterr().err
    # --tx-delay-us: into the endpoint's delay line; negative refused
    assert main(["client", "--ifaces", "a", "--peer", "h", "--tx-delay-us", "-5"]) == 2
    assert "--tx-delay-us must be >= 0" in capsys.readouterr().err
    from mrc.cli import _host

    a = build_parser().parse_args(["client", "--ifaces", "lo", "--peer", "h", "--tx-delay-us", "15000"])
    assert _host(a).tx_delay_us == 15000  # (lo: _host checks that the interfaces exist)


def test_cli_json_report_shape():
    """The text report formats every field the JSON carries (no KeyError on a real-shaped result)."""
    from mrc.cli import format_client

    r = {"config": {"mode": "mrc", "encap": "srv6", "qps": 1, "size": 4, "mtu": 8192, "ports": {"1": "x"},
                    "evs": 2, "imm": False},
         "results": {"bytes": 4, "messages": 1, "seconds": 0.1, "mb_per_s": 0.0, "gbit_per_s": 0.0,
                     "latency_us": {"p50": 1.0, "p99": 2.0, "p999": 3.0}},
         "retransmissions": {"total": 1, "rack": 1, "timeout": 0, "trim": 0, "nak": 0, "rnr": 0},
         "ev_timeline": [{"t_s": 0.01, "qpn": 256, "ev": 1, "port": 2, "from": "GOOD", "to": "ASSUMED_BAD",
                          "cause": "port_down"}],
         "link_events": [{"t_s": 0.009, "port": 2, "ifname": "x", "state": "down"}],
         "server": {"verify": "ok"}, "errors": []}
    text = format_client(json.loads(json.dumps(r)))
    assert "GOOD -> ASSUMED_BAD  (port_down)" in text and "port 2 (x) down" in text
    assert "  +0.010000 s  qp 256 ev 1 port 2" in text


def test_a_link_event_before_the_start_prints_its_sign_once():
    """A server's ports are read as they are when its sockets open, before the run's t0: the report
    printed "+-0.073489 s  port 1 (vb1) down" (running docs/mrc_endpoint.md's veth example)."""
    from mrc.cli import format_server

    r = {"verify": "ok", "imm": "skipped", "bytes_placed": 4, "duplicates_received": 0, "imm_completions": 0,
         "imm_in_order": True, "timed_out": False, "ev_timeline": [],
         "link_events": [{"t_s": -0.073489, "port": 1, "ifname": "vb1", "state": "down"},
                         {"t_s": 0.202139, "port": 1, "ifname": "vb1", "state": "up"}]}
    lines = format_server(r).splitlines()
    assert lines[2:4] == ["  -0.073489 s  port 1 (vb1) down", "  +0.202139 s  port 1 (vb1) up"], lines


def test_cli_text_report_says_why_for_the_first_ev_changes():
    """The text report prints a "why:" line (the change's evidence, one line) under each of the first
    EVIDENCE_SHOWN EV changes; a change without evidence (an older --json) prints none."""
    from mrc.cli import EVIDENCE_SHOWN, format_client

    ev = {"rule": "port_down", "port": 2, "ports_down": [2]}
    tl = [{"t_s": 0.01 + k / 1000, "qpn": 0, "ev": k, "port": 2, "from": "GOOD", "to": "ASSUMED_BAD",
           "cause": "port_down", "evidence": ev} for k in range(EVIDENCE_SHOWN + 2)]
    tl.insert(1, {"t_s": 0.0105, "qpn": 256, "ev": 9, "port": 1, "from": "GOOD", "to": "ASSUMED_BAD",
                  "cause": "rack"})
    r = {"config": {"mode": "mrc", "encap": "srv6", "qps": 1, "size": 4, "mtu": 8192, "ports": {"1": "x"},
                    "evs": 2, "imm": False},
         "results": {"bytes": 4, "messages": 1, "seconds": 0.1, "mb_per_s": 0.0, "gbit_per_s": 0.0,
                     "latency_us": {"p50": 1.0, "p99": 2.0, "p999": 3.0}},
         "retransmissions": {"total": 1, "rack": 1, "timeout": 0, "trim": 0, "nak": 0, "rnr": 0},
         "ev_timeline": tl, "link_events": [], "server": {"verify": "ok"}, "errors": []}
    lines = format_client(json.loads(json.dumps(r))).splitlines()
    whys = [k for k, x in enumerate(lines) if x.strip().startswith("why:")]
    assert len(whys) == EVIDENCE_SHOWN - 1  # the first EVIDENCE_SHOWN changes, less the one without
    assert all("ASSUMED_BAD  (port_down)" in lines[k - 1] for k in whys)
    assert lines[whys[0]].strip() == "why: port_down: local NIC port 2 down (ports down: [2])"


def test_cc_choice_defaults_per_mode_and_bad_names_are_refused(capsys):
    from mrc.endpoint.perf import PerfError, PerfParams

    assert PerfParams(mode="mrc").cc_name() == "nscc" and PerfParams(mode="rc").cc_name() == "dcqcn"
    assert PerfParams(mode="rc", cc="none").cc_name() == "none"
    with pytest.raises(PerfError, match="--cc"):
        PerfParams(cc="cubic").check()
    a = build_parser().parse_args(["client", "--ifaces", "a", "--peer", "h", "--cc", "dcqcn"])
    assert a.cc == "dcqcn"
    with pytest.raises(SystemExit):
        main(["client", "--ifaces", "a", "--peer", "h", "--cc", "reno"])
    assert "invalid choice" in capsys.readouterr().err


def test_client_refuses_an_mtu_or_psn_window_no_server_takes():
    """--mtu and --mpr are refused by the client with the rule, not sent to the server to be refused
    there as a bootstrap error (a one-shot server then exits 2 as if its own arguments were bad)."""
    from mrc.endpoint.perf import PerfError, PerfParams

    for kw, flag in (({"mtu": 5000}, "--mtu"), ({"mtu": 100}, "--mtu"), ({"mpr": 0}, "--mpr"), ({"mpr": 65}, "--mpr")):
        with pytest.raises(PerfError, match=flag):
            PerfParams(**kw).check()
    PerfParams(mtu=0).check()  # 0: the largest the interfaces allow
    PerfParams(mtu=4096, mpr=64).check()


def test_json_client_that_fails_setup_still_prints_a_json_answer(capsys):
    """`mrc-perf client --json` with a setup error: exit 2, the error on stderr, and on stdout a JSON
    object saying so (it printed nothing there, so a script parsing stdout got no document)."""
    assert main(["client", "--ifaces", "nosuch0", "--peer", "unix:/nonexistent.sock", "--json"]) == 2
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert doc["ok"] is False and doc["role"] == "client" and "nosuch0" in doc["error"] and "nosuch0" in err


def test_scenario_traffic_cc_and_line_rate_default():
    from mrc_fabric.scenarios import ScenarioError, parse_scenario

    sc = parse_scenario({"traffic": {"cc": "none"}})
    assert sc.traffic.cc == "none" and sc.traffic.rate_gbps == 0.0  # 0: the fabric's link rate
    with pytest.raises(ScenarioError, match="traffic.cc"):
        parse_scenario({"traffic": {"cc": "bbr"}})
    with pytest.raises(ScenarioError, match="rate_gbps"):
        parse_scenario({"traffic": {"rate_gbps": -1}})


def test_fabric_line_rate_follows_the_link_model(tmp_path):
    from mrc.wire.formats import ETH_WIRE_OVERHEAD
    from mrc_fabric.scenarios import FabricEnv, FabricSpec
    from mrc_fabric.targets import FULL_FRAME_BYTES

    env = FabricEnv(FabricSpec(link_defaults={"rate_pps": 300}), prefix="u", grpc_base_port=1, workdir=tmp_path)
    assert env.line_rate_gbps("h1") == pytest.approx(300 * (FULL_FRAME_BYTES + ETH_WIRE_OVERHEAD) * 8 / 1e9)
    bare = FabricEnv(FabricSpec(), prefix="u", grpc_base_port=1, workdir=tmp_path / "b")
    assert bare.line_rate_gbps("h1") == 10.0  # no rate model: a 10 Gb/s NIC


def test_link_delay_goes_to_the_hosts_where_the_switches_cannot_delay(tmp_path, monkeypatch):
    """FabricSpec.delay_at: "hosts" takes every link's delay_us off the switches and gives each host's NIC
    the longest one-way path delay the switches would have applied (leaf uplink + spine downlink + leaf
    port to the host); "switches" and "auto" on softswitch (its own link model) keep it at the switches."""
    from mrc_fabric.scenarios import FabricEnv, FabricSpec, ScenarioError, parse_scenario

    ld = {"rate_pps": 300, "delay_us": 5000}
    hosts = FabricEnv(FabricSpec(link_defaults=ld, host_links={"delay_us": 2000}, delay_at="hosts"), prefix="u",
                      grpc_base_port=1, workdir=tmp_path / "h", target="softswitch")
    assert hosts.host_delay_us == 2 * 5000 + 2000
    assert all(lk.props.delay_us == 0 and lk.props.rate_pps == 300 for lk in hosts.topo.links)
    for where in ("switches", "auto"):
        sw = FabricEnv(FabricSpec(link_defaults=ld, delay_at=where), prefix="u", grpc_base_port=1,
                       workdir=tmp_path / where, target="softswitch")
        assert sw.host_delay_us == 0 and all(lk.props.delay_us == 5000 for lk in sw.topo.links)
    # auto on a target without a link model (bmv2): the switches where netem works, else the hosts
    from mrc_fabric.scenarios import runner

    for netem, want in ((True, 0), (False, 15000)):
        monkeypatch.setattr(runner, "netem_available", lambda netem=netem: netem)
        bm = FabricEnv(FabricSpec(link_defaults=ld), prefix="u", grpc_base_port=1,
                       workdir=tmp_path / f"bm{netem}", target="bmv2")
        assert bm.host_delay_us == want
        assert all(lk.props.delay_us == (5000 if netem else 0) for lk in bm.topo.links)
    bare = FabricEnv(FabricSpec(delay_at="hosts"), prefix="u", grpc_base_port=1, workdir=tmp_path / "b")
    assert bare.host_delay_us == 0  # no delay on the links: none at the hosts either
    assert parse_scenario({"fabric": {"delay_at": "hosts"}}).fabric.delay_at == "hosts"
    with pytest.raises(ScenarioError, match="scenario.fabric.delay_at"):
        parse_scenario({"fabric": {"delay_at": "spines"}})


def test_cli_names_a_missing_interface_before_any_bootstrap(capsys, tmp_path):
    """A typo in --ifaces failed only after the client's 30 s of connect retries (naming the peer,
    not the interface), and a server listened for peers it could never serve."""
    import time

    t0 = time.monotonic()
    assert main(["client", "--ifaces", "lo,mrc-no-such-if0", "--peer", f"unix:{tmp_path}/none.sock",
                 "--iters", "1"]) == 2
    assert "--ifaces: no interface 'mrc-no-such-if0' in this network namespace" in capsys.readouterr().err
    sock = tmp_path / "s.sock"
    assert main(["server", "--ifaces", "mrc-no-such-if0", "--bootstrap", f"unix:{sock}"]) == 2
    assert "no interface 'mrc-no-such-if0'" in capsys.readouterr().err
    assert not sock.exists()
    assert time.monotonic() - t0 < 5


def test_a_bad_bootstrap_address_names_its_flag_before_any_interface_is_opened(capsys):
    """`--peer h:99999` said "mrc-perf: port out of range in address 'h:99999'" (which flag?), and only
    after the interfaces were checked: a typo in --ifaces hid it."""
    for argv, flag in ((["client", "--peer", "127.0.0.1:99999"], "--peer"),
                       (["client", "--peer", "[fd00::1"], "--peer"),
                       (["server", "--bootstrap", "unix:"], "--bootstrap"),
                       (["server", "--bootstrap", "1.2.3.4:x"], "--bootstrap")):
        with pytest.raises(SystemExit) as e:
            main([*argv, "--ifaces", "mrc-no-such-if0"])
        err = capsys.readouterr().err
        assert e.value.code == 2 and f"error: argument {flag}: " in err, (argv, err)
        assert "no interface" not in err


def test_connect_gives_up_at_once_on_a_name_that_does_not_resolve():
    """Only a server that may still be starting is worth retrying; an unknown host name failed after
    the whole 30 s of retries."""
    import time

    from mrc.endpoint.bootstrap import Address, BootstrapError, connect

    t0 = time.monotonic()
    with pytest.raises(BootstrapError, match="cannot reach the mrc-perf server at mrc-no-such-host.invalid:18515") as ei:
        connect(Address("tcp", host="mrc-no-such-host.invalid", port=18515), timeout_s=4)
    took = time.monotonic() - t0
    assert took < 2 or "Temporary failure" in str(ei.value), (took, str(ei.value))  # EAI_AGAIN is retried


def test_a_plan_files_errors_name_the_line_and_column(tmp_path, controller_plans):
    """A field's error in a plan file named it after the file's name ('/x/h1.yaml.peers.h2.gid: ...'),
    without a line; YAML and JSON plans now say FILE:LINE:COL: peers.h2.gid: ..., as topologies and
    scenarios do."""
    text = controller_plans[0].read_text()
    data = yaml.safe_load(text)
    peer = next(iter(data["peers"]))
    bad = text.replace(data["peers"][peer]["gid"], "not-a-gid", 1)
    f = tmp_path / "p.yaml"
    f.write_text(bad)
    line = next(i for i, ln in enumerate(bad.splitlines(), 1) if "not-a-gid" in ln)
    col = bad.splitlines()[line - 1].index("not-a-gid") + 1
    with pytest.raises(PlanError, match=rf"^{f}:{line}:{col}: peers\.{peer}\.gid: not an IPv6 address: 'not-a-gid'$"):
        load_plan(f)
    j = tmp_path / "p.json"
    j.write_text('{"host": "h1",\n "gid": "fd00::1",\n "ports": {"1": {"mac": "nope"}}}')
    with pytest.raises(PlanError, match=rf"^{j}:3:17: ports\.1: "):
        load_plan(j)


def test_a_tab_indented_json_plans_error_names_the_line(tmp_path):
    """JSON indented with tabs (as many editors write it) is valid JSON but not YAML: re-reading it to
    place an error failed, and the error named the file alone.  (Columns count characters, a tab
    one, as the JSON decoder's own errors do.)"""
    j = tmp_path / "p.json"
    j.write_text('{\n\t"host": "h1",\n\t"gid": "fd00::1",\n\t"ports": {\n\t\t"1": {"mac": "nope"}\n\t}\n}\n')
    with pytest.raises(PlanError, match=rf"^{j}:5:8: ports\.1: bad MAC address 'nope'"):
        load_plan(j)


def test_a_field_under_a_dotted_key_is_placed_at_the_field(tmp_path):
    """A peer named with dots (``h2.rack1``) gives the path ``peers.h2.rack1.gid``; split at every dot,
    it found no key ``h2`` and placed the error where ``peers`` begins: 4:3, the line of another peer,
    h3 (the gid is at 5:19)."""
    f = tmp_path / "p.yaml"
    f.write_text("host: h1\ngid: fd00::1\npeers:\n  h3: {gid: 'fd00::3'}\n  h2.rack1: {gid: bad}\n")
    with pytest.raises(PlanError, match=rf"^{f}:5:19: peers\.h2\.rack1\.gid: not an IPv6 address: 'bad'$"):
        load_plan(f)


def test_a_client_says_once_on_stderr_that_it_is_waiting_for_a_silent_server(capsys, tmp_path):
    """mrc-perf client retried for up to 30 s without a word while no server answered; now one line
    on stderr after bootstrap.WAIT_NOTE_S (2 s), then the usual error at the end.  stdout (which
    scripts parse) stays empty in text mode, and --json's stdout is still the one error document."""
    import time

    from mrc.endpoint.bootstrap import WAIT_NOTE_S

    assert WAIT_NOTE_S == 2.0
    peer = f"unix:{tmp_path}/none.sock"
    t0 = time.monotonic()
    assert main(["client", "--ifaces", "lo", "--peer", peer, "--timeout", "3"]) == 2
    assert 3 <= time.monotonic() - t0 < 6
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [
        (f"mrc-perf client: waiting for the server at {peer} (nothing answers yet: [Errno 2] No such file or "
         "directory; giving up after 3 s)"),
        f"mrc-perf: cannot reach the mrc-perf server at {peer}: [Errno 2] No such file or directory"]
    assert main(["client", "--ifaces", "lo", "--peer", peer, "--timeout", "3", "--json"]) == 2
    out, err = capsys.readouterr()
    assert json.loads(out)["ok"] is False
    assert json.loads(err.splitlines()[0])["note"].startswith(f"waiting for the server at {peer}")
    assert main(["client", "--ifaces", "lo", "--peer", peer, "--timeout", "1.5"]) == 2  # gives up before the note
    assert "waiting" not in capsys.readouterr().err


def test_the_waiting_note_is_due_even_while_a_connect_hangs_on_a_dropped_syn():
    """A listener whose accept queue is full drops SYNs (Linux), so one connect() can block for the
    whole timeout: the first attempts wait only until the note is due, and the note is on time."""
    import socket
    import time

    from mrc.endpoint.bootstrap import Address, BootstrapError

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(0)
    port = srv.getsockname()[1]
    fill = []
    try:
        for _ in range(3):  # never accepted: the queue overflows and further SYNs are dropped
            c = socket.socket()
            c.setblocking(False)
            try:
                c.connect(("127.0.0.1", port))
            except BlockingIOError:
                pass
            fill.append(c)
        time.sleep(0.2)
        notes: list[float] = []
        t0 = time.monotonic()
        with pytest.raises(BootstrapError, match=f"cannot reach the mrc-perf server at 127.0.0.1:{port}"):
            connect(Address("tcp", host="127.0.0.1", port=port), timeout_s=3,
                    on_wait=lambda m: notes.append(time.monotonic() - t0), wait_note_s=1)
        assert len(notes) == 1 and 1 <= notes[0] < 2, notes
    finally:
        for c in fill:
            c.close()
        srv.close()


def test_a_topology_given_as_the_plan_is_named_as_one(capsys):
    """``--plan examples/small.yaml`` (the topology, not a host's plan) said only "host: missing"."""
    from pathlib import Path

    topo = Path(__file__).resolve().parents[3] / "examples" / "small.yaml"
    with pytest.raises(PlanError, match=rf"^{topo}: this is a topology file, not a host's EV plan \(make the "
                                        r"plans with `mrc-controller ev gen -t TOPOLOGY -o DIR`"):
        load_plan(topo)
    with pytest.raises(PlanError, match=r"^plan\.host: missing$"):  # any other mapping without a host
        parse_plan({"gid": "fd00::1"})


def test_a_plan_directory_says_to_give_the_hosts_file_in_it(tmp_path):
    """`--plan DIR` with `ev gen -o DIR`'s folder said only "DIR: Is a directory"."""
    from controller.cli import main as ctl_main

    assert ctl_main(["ev", "gen", "-t", "examples/large.yaml", "-o", str(tmp_path / "ev"), "--format", "json"]) == 0
    with pytest.raises(PlanError, match=rf"^{tmp_path / 'ev'}: is a directory; give this host's plan file in it "
                       r"\(h1.json, h2.json, h3.json, h4.json, ...\)$"):
        load_plan(tmp_path / "ev")
    (tmp_path / "few").mkdir()
    (tmp_path / "few" / "h1.yaml").write_text("x: 1\n")
    with pytest.raises(PlanError, match=r"is a directory; give this host's plan file in it \(h1.yaml\)$"):
        load_plan(tmp_path / "few")
    with pytest.raises(PlanError, match=r"is a directory; give this host's plan file in it$"):
        load_plan(tmp_path)


def test_fabric_files_are_named_absolute_whatever_the_callers_directory(tmp_path, monkeypatch):
    """The agents run with the repository as their working directory; a work folder given relative to the
    caller's (``mrc-fabric demo --out demo-out`` from a home directory) named EV plans they could not find:
    "agent h1: PlanError: demo-out/evplans/h1.json: No such file or directory"."""
    from mrc_fabric.scenarios import FabricEnv, FabricSpec

    monkeypatch.chdir(tmp_path)
    env = FabricEnv(FabricSpec(), prefix="u", grpc_base_port=1, workdir=Path("demo-out"))
    for p in (env.workdir, env.plan_dir, env.topo_path):
        assert p.is_absolute() and p.is_relative_to(tmp_path.resolve()), p
    assert not env.workdir.exists()  # made once the fabric took the prefix and ports (__enter__)


@pytest.mark.parametrize("how", ["console script", "python -m"])
def test_ctrl_c_while_the_commands_import_ends_with_130(tmp_path, how):
    """Ctrl-C in mrc-perf's first quarter second (the endpoint and the transport) was a
    KeyboardInterrupt traceback from the script's `from mrc.cli import main`; now it ends as a Ctrl-C
    during a run does: 130 and nothing on stderr."""
    import sys
    from pathlib import Path

    from sigint_helper import interrupt_while_importing

    script = Path(sys.executable).parent / "mrc-perf"
    if how == "console script" and not script.exists():
        pytest.skip(f"no console script {script} (package not installed)")
    cmd = [str(script)] if how == "console script" else [sys.executable, "-m", "mrc"]
    rc, err = interrupt_while_importing([*cmd, "client", "--ifaces", "nosuch0", "--peer", "127.0.0.1:1"], tmp_path)
    assert (rc, err) == (130, "")
