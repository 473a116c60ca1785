"""The fabric on the real kernel: namespaces, veths, MACs/MTUs, raw L2 frames, faults, teardown.

Needs root.  Prefix ``h7*`` for every namespace and interface; state files under pytest's tmp_path.
"""
from __future__ import annotations

import errno
import os
import select
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pyroute2 import netns as pnetns

from controller.topology import load_topology
from mrc_fabric import netbuild
from mrc_fabric.fabric import Fabric, FabricError, down_prefix
from mrc_fabric.state import FabricState
from mrc_fabric.switches import target_available
from mrc_fabric.targets import TARGETS, get_target

pytestmark = pytest.mark.root
REPO = Path(__file__).resolve().parents[2]
SMALL = REPO / "examples" / "small.yaml"
ETH_TYPE = 0x88B5  # IEEE local experimental ethertype


@pytest.fixture(autouse=True)
def _root():
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces, veth, AF_PACKET)")


def _leftovers(prefix: str) -> list[str]:
    with netbuild.ipr() as s:
        ifs = [lk.get("IFLA_IFNAME") for lk in s.get_links()]
    return [i for i in ifs if i.startswith(prefix + "s")] + \
        [n for n in pnetns.listnetns() if n.startswith(prefix + "-")]


def _raw(ifname: str, ns: str | None = None) -> socket.socket:
    if ns:
        pnetns.pushns(ns)
    try:
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_TYPE))
    finally:
        if ns:
            pnetns.popns()
    s.bind((ifname, 0))
    return s


def _frame(src: str, tag: bytes) -> bytes:
    return (b"\xff" * 6 + bytes.fromhex(src.replace(":", "")) + ETH_TYPE.to_bytes(2, "big") + tag).ljust(60, b"\0")


def _received(rx: socket.socket, tag: bytes, deadline_s: float = 2.0) -> bool:
    end = time.monotonic() + deadline_s
    while (left := end - time.monotonic()) > 0:
        if not select.select([rx], [], [], left)[0]:
            continue
        try:
            if tag in rx.recv(2048):
                return True
        except OSError as e:  # a socket bound to a link that went down reports ENETDOWN once
            if e.errno != errno.ENETDOWN:
                raise
    return False


@pytest.fixture
def net(tmp_path):
    fab = Fabric(load_topology(SMALL), prefix="h7n", target=None, state_dir=tmp_path)
    with fab:
        yield fab
    assert _leftovers("h7n") == []


def test_build_namespaces_interfaces_macs_mtus(net):
    topo, sids = net.topo, net.sids
    assert {net.netns(h) for h in topo.hosts} <= set(pnetns.listnetns())
    for h in topo.hosts:
        for p in range(1, topo.planes + 1):
            info = netbuild.link_info(net.names.host_if(p), net.netns(h))
            assert info == {"mtu": 9000, "mac": sids.host_mac(h, p), "up": True, "carrier": True}
        with netbuild.ipr(net.netns(h)) as s:
            addrs = {a.get("IFA_ADDRESS") for a in s.get_addr(family=socket.AF_INET6)}
        assert str(sids.host_gid(h)) in addrs
        assert {str(sids.host_port_address(h, p)) for p in (1, 2)} <= addrs
    for sw in topo.switches:
        for p in topo.ports_of(sw):
            ifname = net.switch_port_if(sw, p)
            assert len(ifname) <= 15
            assert netbuild.link_info(ifname)["mac"] == sids.switch_mac(sw, p)
            assert netbuild.link_info(ifname)["mtu"] == 9000
            assert Path(f"/proc/sys/net/ipv6/conf/{ifname}/disable_ipv6").read_text().strip() == "1"
    assert FabricState.path("h7n", net.state_dir).exists()


def test_raw_frame_from_host_reaches_switch_port(net):
    leaf, port = net.topo.host_leaf("h1", 1)
    rx = _raw(net.switch_port_if(leaf.name, port))
    tx = _raw("nic1", net.netns("h1"))
    try:
        tag = b"h7-l2-check-" + os.urandom(4).hex().encode()
        tx.send(_frame(net.sids.host_mac("h1", 1), tag))
        assert _received(rx, tag)
        other = _raw(net.switch_port_if("p1l2", 3))  # a port this frame must not reach
        tx.send(_frame(net.sids.host_mac("h1", 1), tag + b"2"))
        assert not _received(other, tag + b"2", 0.3)
        other.close()
    finally:
        rx.close()
        tx.close()


def test_link_down_up(net):
    a, b = net.switch_port_if("p1l1", 1), net.switch_port_if("p1s1", 1)
    link = net.link_down("p1l1", "p1s1")
    assert link.name == "p1l1:1--p1s1:1"
    assert not netbuild.link_info(a)["up"] and not netbuild.link_info(b)["up"]
    st = net.status()
    assert not st["links"][link.name]["up"]
    assert st["target"] == "none"  # as the text view says it (the JSON said "")
    rx, tx = _raw(b), _raw(a)
    try:
        with pytest.raises(OSError):  # sending on a down interface fails (ENETDOWN)
            tx.send(_frame(net.sids.switch_mac("p1l1", 1), b"h7-down"))
        net.link_up("p1l1:1", "p1s1:1")
        assert netbuild.link_info(a)["up"] and netbuild.link_info(b)["up"]
        tag = b"h7-up-" + os.urandom(4).hex().encode()
        end = time.monotonic() + 5
        while not _received(rx, tag, 0.2):  # carrier comes back asynchronously
            assert time.monotonic() < end, "link did not carry frames after link_up"
            try:
                tx.send(_frame(net.sids.switch_mac("p1l1", 1), tag))
            except OSError:
                pass
    finally:
        rx.close()
        tx.close()
    with pytest.raises(FabricError, match="no such link"):
        net.link_down("p1l1", "p1l2")


def test_teardown_after_exception_inside_context(tmp_path):
    fab = Fabric(load_topology(SMALL), prefix="h7x", target=None, state_dir=tmp_path)
    with pytest.raises(RuntimeError, match="boom"), fab:
        assert fab.netns("h2") in pnetns.listnetns()
        raise RuntimeError("boom")
    assert _leftovers("h7x") == []
    assert not FabricState.path("h7x", tmp_path).exists()


def test_failed_build_cleans_up_and_second_up_refused(tmp_path):
    pnetns.create("h7f-h3")  # collides with the third host namespace
    try:
        with pytest.raises(Exception, match="h7f-h3 already exists"):
            Fabric(load_topology(SMALL), prefix="h7f", target=None, state_dir=tmp_path).up()
        assert [x for x in _leftovers("h7f") if x != "h7f-h3"] == []
    finally:
        pnetns.remove("h7f-h3")
    fab = Fabric(load_topology(SMALL), prefix="h7f", target=None, state_dir=tmp_path)
    with fab, pytest.raises(FabricError, match="already up"):
        Fabric(load_topology(SMALL), prefix="h7f", target=None, state_dir=tmp_path).up()
    assert _leftovers("h7f") == []


def test_down_after_crashed_process(tmp_path):
    """A process that builds a fabric and dies without cleanup: `down` removes what it left."""
    code = ("import os, sys; from controller.topology import load_topology; from mrc_fabric import Fabric; "
            f"f = Fabric(load_topology({str(SMALL)!r}), prefix='h7c', target=None, state_dir={str(tmp_path)!r}); "
            "f.up(); os._exit(3)")
    try:
        r = subprocess.run([sys.executable, "-c", code], cwd=REPO, timeout=120, check=False)
        assert r.returncode == 3
        # 4 host namespaces; 8 leaf-spine links x 2 root ends + 8 host links x 1 root end
        assert len(_leftovers("h7c")) == 4 + 24
        done = down_prefix("h7c", tmp_path)
        assert any("deleted netns h7c-h1" in d for d in done)
        assert _leftovers("h7c") == []
        assert down_prefix("h7c", tmp_path) == []
    finally:
        down_prefix("h7c", tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("target", [pytest.param(t, marks=getattr(pytest.mark, t)) for t in TARGETS])
def test_switch_processes(tmp_path, target):
    """One switch process per switch, gRPC answering; stop/start by PID; nothing left afterwards."""
    why = target_available(target)
    if why:
        pytest.skip(why)
    base = 20700 + 100 * TARGETS.index(target)
    fab = Fabric(load_topology(SMALL), prefix="h7s", target=target, state_dir=tmp_path, grpc_base_port=base,
                 runtime_port_offset=50)
    with fab:
        st = fab.status()["switches"]
        assert len(st) == 8 and all(p["running"] and p["grpc_answers"] for p in st.values())
        assert fab.grpc_addr("p1l1") == f"127.0.0.1:{base + 2}"
        pids = [r.pid for r in fab.state.procs.values()]
        old = fab.state.procs["p1s2"].pid
        fab.switch_stop("p1s2")
        full = fab.status()
        assert not fab.switch_running("p1s2") and not full["switches"]["p1s2"]["grpc_answers"]
        # the stopped switch's links are down (their veths are still up: said apart), the others up
        on_p1s2 = {lk.name for lk in fab.topo.links if "p1s2" in (lk.a.node, lk.b.node)}
        assert on_p1s2 and all(not full["links"][n]["up"] and full["links"][n]["veth_up"]
                               and full["links"][n]["stopped_switches"] == ["p1s2"] for n in on_p1s2)
        assert all(lk["up"] and not lk["stopped_switches"] for n, lk in full["links"].items() if n not in on_p1s2)
        with pytest.raises(FabricError, match="not running"):
            fab.switch_stop("p1s2")
        fab.switch_start("p1s2")
        assert fab.switch_running("p1s2") and fab.state.procs["p1s2"].pid != old
        # a target without its own delay model gets the delay from netem, which this kernel may lack
        fab.shape("p1l1", 1, delay_us=20 if get_target(target).has_link_delay else None, rate_pps=100000,
                  queue_depth=32)
        with pytest.raises(FabricError, match="controller"):
            fab.port_admin("p1l1", 1, False)
        pids.append(fab.state.procs["p1s2"].pid)
    for pid in pids:
        assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]
    assert _leftovers("h7s") == []


def test_sigterm_tears_down(tmp_path):
    """SIGTERM to a process inside ``with Fabric(...)`` unwinds through the context: nothing left."""
    import signal as sig

    code = ("import signal; from controller.topology import load_topology; from mrc_fabric import Fabric\n"
            f"with Fabric(load_topology({str(SMALL)!r}), prefix='h7t', target=None, state_dir={str(tmp_path)!r}):\n"
            "    print('ready', flush=True)\n"
            "    signal.pause()\n")
    p = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ready"
        assert len(_leftovers("h7t")) == 28
        p.send_signal(sig.SIGTERM)
        assert p.wait(timeout=60) == 128 + sig.SIGTERM
        assert _leftovers("h7t") == []
        assert not FabricState.path("h7t", tmp_path).exists()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        down_prefix("h7t", tmp_path)


def test_netem_link_delay_is_set_or_refused_with_the_reason():
    """bmv2's link delay: a netem qdisc on the switch's veth end; kernels without netem refuse it."""
    name = "h7netem0"
    with netbuild.ipr() as s:
        s.link("add", ifname=name, kind="veth", peer="h7netem1")
    try:
        if netbuild.netem_available():
            netbuild.set_netem_delay(name, 5000)
            out = subprocess.run(["tc", "qdisc", "show", "dev", name], capture_output=True, text=True,
                                 check=True).stdout
            assert "netem" in out and "delay 5ms" in out, out
        else:
            with pytest.raises(netbuild.NetemUnavailable, match=rf"tc qdisc replace dev {name} root netem"):
                netbuild.set_netem_delay(name, 5000)
    finally:
        netbuild.delete_interface(name)
    assert not netbuild.interface_exists(name)


@pytest.mark.slow
def test_late_shaping_target_loads_a_pipeline_and_reshapes_a_restarted_switch(tmp_path, monkeypatch):
    """bmv2's contract -- link properties only over the runtime port once the switch runs, and only once
    a pipeline is loaded (its CLI reads the switch's JSON first) -- on real softswitch processes: the
    softswitch plugin declared that way (its command line left without shaping).  Bring-up loads the
    default pipeline into every switch before shaping it; a switch stopped and started again comes back
    with default queues and is shaped again (``Fabric.reshape``), its pipeline loaded first."""
    import yaml

    from controller import p4contract as P4
    from controller.topology import parse_topology
    from mrc_fabric import targets
    from mrc_fabric.targets import load_pipeline, running_cookie
    from mrc_fabric.targets.softswitch import Softswitch
    from softswitch.engine.control import send_command

    why = target_available("softswitch")
    if why:
        pytest.skip(why)

    class LateShaping(Softswitch):
        shapes_at_start = False
        shapes_need_pipeline = True

        def switch_argv(self, device_id, ports, grpc_port, **kw):
            for k in ("queue_depth", "control_queue_depth", "link_rate", "link_delay", "queue_rate"):
                kw.pop(k, None)
            return super().switch_argv(device_id, ports, grpc_port, **kw)

    registry = targets._registry
    monkeypatch.setattr(targets, "_registry", lambda: {**registry(), "softswitch": LateShaping})
    data = yaml.safe_load(SMALL.read_text())
    data["link_defaults"] = {"queue_depth": 12}
    fab = Fabric(parse_topology(data), prefix="h7l", target="softswitch", state_dir=tmp_path,
                 grpc_base_port=20900, runtime_port_offset=50)
    cookie = load_pipeline("softswitch").cookie

    def depths(switch: str) -> tuple[int, int]:
        rows = send_command(f"127.0.0.1:{fab.state.procs[switch].runtime_port}", "port_stats", [1])
        return rows[0]["queues"][P4.PRIORITY_DATA]["depth"], rows[0]["queues"][P4.PRIORITY_TRIMMED]["depth"]

    with fab:
        for name in fab.topo.switches:
            assert running_cookie(fab.grpc_addr(name), fab.topo.switches[name].device_id) == cookie, name
        assert depths("p1s2") == (12, 48)  # the data queues and the control queue (4x)
        fab.switch_stop("p1s2")
        fab.switch_start("p1s2", shape=False)
        assert running_cookie(fab.grpc_addr("p1s2"), fab.topo.switches["p1s2"].device_id) is None
        assert depths("p1s2") != (12, 48)  # what a restart of such a target loses
        fab.reshape("p1s2")
        assert running_cookie(fab.grpc_addr("p1s2"), fab.topo.switches["p1s2"].device_id) == cookie
        assert depths("p1s2") == (12, 48)
        fab.switch_stop("p1s2")
        fab.switch_start("p1s2")  # the fault's restart reshapes by itself
        assert depths("p1s2") == (12, 48)
    assert _leftovers("h7l") == []
