"""Static checks of the build and Docker plumbing (Makefile, docker/, docs/targets.md) that run everywhere.

bmv2 and p4c themselves are exercised inside the Docker image (`make docker-test`); here we check
that the image is pinned by digest, that every `make` target the docs mention exists, that the
Makefile points only at files that exist, and that `make build` works with softswitch.
"""
from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from controller import p4contract as P4

ROOT = Path(__file__).resolve().parents[1]
MAKEFILE = ROOT / "Makefile"
DOCKERFILE = ROOT / "docker" / "Dockerfile"
COMPOSE = ROOT / "docker" / "compose.yaml"
LOCK = ROOT / "docker" / "base-image.lock"
DIGEST_REF = re.compile(r"[a-z0-9][a-z0-9._/-]*(:[\w][\w.-]*)?@sha256:[0-9a-f]{64}")
TAG_REF = re.compile(r"[a-z0-9][a-z0-9._/-]*:[\w][\w.-]*")

needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="GNU make is not on PATH")


def make(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run make in the repository root with this interpreter as PYTHON."""
    return subprocess.run(["make", "--no-print-directory", f"PYTHON={sys.executable}", *args], check=False,
                          cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=env)


def makefile_var(name: str) -> str:
    m = re.search(rf"^{name}\s*[:?]?=\s*(\S+)\s*$", MAKEFILE.read_text(), re.MULTILINE)
    assert m, f"Makefile defines no {name}"
    return m.group(1)


def phony_targets() -> set[str]:
    text = MAKEFILE.read_text().replace("\\\n", " ")
    m = re.search(r"^\.PHONY:(.*)$", text, re.MULTILINE)
    assert m, "Makefile has no .PHONY line"
    return set(m.group(1).split())


# --- Dockerfile: pinned base image ----------------------------------------------------------------
def dockerfile_lines() -> list[str]:
    return DOCKERFILE.read_text().replace("\\\n", " ").splitlines()


def test_dockerfile_from_lines_are_pinned_by_digest_or_the_documented_arg() -> None:
    """Every FROM is image@sha256:..., or ${BASE_IMAGE} whose only pinned source is the docker-pin lock."""
    lines = dockerfile_lines()
    froms = [ln.split()[1] for ln in lines if ln.upper().startswith("FROM ")]
    assert froms, "docker/Dockerfile has no FROM line"
    args = {m.group(1): m.group(2) for ln in lines if (m := re.match(r"ARG (\w+)=(\S+)", ln))}
    for ref in froms:
        if DIGEST_REF.fullmatch(ref):
            continue
        m = re.fullmatch(r"\$\{?(\w+)\}?", ref)
        assert m, f"FROM {ref}: neither pinned by digest nor a build argument"
        default = args.get(m.group(1))
        assert default and TAG_REF.fullmatch(default), f"ARG {m.group(1)} needs a tag default, got {default!r}"
        assert default == makefile_var("DOCKER_BASE_TAG"), "Dockerfile default and DOCKER_BASE_TAG differ"
        recipe = MAKEFILE.read_text()
        assert f"--build-arg {m.group(1)}=$$(cat $(DOCKER_LOCK))" in recipe, \
            "make docker-build must pass the digest from the lock file"
        assert "docker-pin:" in recipe and "RepoDigests" in recipe, "make docker-pin must resolve the digest"


def test_base_image_lock_when_present_is_a_digest_of_the_documented_tag() -> None:
    if not LOCK.exists():
        pytest.skip("docker/base-image.lock not written yet (make docker-pin needs a Docker engine)")
    ref = LOCK.read_text().strip()
    assert DIGEST_REF.fullmatch(ref), f"{LOCK.name}: {ref!r} is not image[:tag]@sha256:<64 hex>"
    assert ref.split("@")[0] == makefile_var("DOCKER_BASE_TAG")


def test_dockerfile_installs_what_the_tests_need() -> None:
    text = DOCKERFILE.read_text()
    for pkg in ("iproute2", "tshark", "ethtool", "python3-venv", "make", "procps", "build-essential"):
        assert re.search(rf"\b{re.escape(pkg)}\b", text), f"docker/Dockerfile does not install {pkg}"
    assert "debconf-set-selections" in text, "tshark must be installed non-interactively"
    assert "pip install --no-cache-dir --no-deps -e '.[test]'" in text, "the project is not pip-installed (editable)"
    for tool in ("p4c-bm2-ss --version", "simple_switch_grpc --version", "--priority-queues"):
        assert tool in text, f"the image build does not check {tool}"


def test_dockerignore_keeps_local_state_out_of_the_context() -> None:
    entries = set((ROOT / ".dockerignore").read_text().split())
    assert {".git", ".venv", "build"} <= entries


def test_compose_services_run_the_same_commands_as_the_make_targets() -> None:
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    recipe = MAKEFILE.read_text()
    for name, target in (("test", "docker-test"), ("demo", "docker-demo"), ("ptf", "docker-ptf")):
        svc = services[name]
        assert svc["privileged"] is True and svc["environment"]["TARGET"] == "bmv2"
        assert svc["build"]["dockerfile"] == "docker/Dockerfile"
        command = svc["command"][-1]
        m = re.search(rf"^{target}:.*\n\t\$\(DOCKER_RUN\) bash -c '([^']*)'", recipe, re.MULTILINE)
        assert m, f"Makefile target {target} has no DOCKER_RUN bash -c line"
        assert command == m.group(1), f"compose {name} and make {target} run different commands"


# --- Makefile -------------------------------------------------------------------------------------
def test_makefile_points_only_at_files_that_exist() -> None:
    """Every repository path in the Makefile exists, unless its recipe tests for it first."""
    text = MAKEFILE.read_text()
    guarded = set(re.findall(r"test -[fs] (\S+) \|\|", text))
    variables = dict(re.findall(r"^(\w+)\s*:?=\s*(\S+)\s*$", text, re.MULTILINE))
    guarded = {variables.get(g.strip("$()"), g) for g in guarded}
    paths = set(re.findall(r"\b((?:ptf_tests|scripts|docker|p4src|softswitch|tests)/[\w./-]+)", text))
    missing = [p for p in sorted(paths) if p not in guarded and not (ROOT / p).exists()]
    assert not missing, f"the Makefile refers to missing paths: {missing}"


@needs_make
def test_make_help_lists_every_target() -> None:
    out = make("help")
    assert out.returncode == 0, out.stderr
    listed = {line.split()[0] for line in out.stdout.splitlines()[1:] if line.strip()}
    assert phony_targets() <= listed, f"not in make help: {phony_targets() - listed}"


def doc_make_targets() -> set[str]:
    """`make <target>` commands in the README, docs/ and the docker files."""
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), COMPOSE, DOCKERFILE, MAKEFILE]
    found: set[str] = set()
    for f in files:
        # commands: in `code spans` or at the start of a (code block) line, never prose ("make sure")
        pattern = r"(?:^|`)[ \t]*(?:\$[ \t]+)?make((?:[ \t]+[A-Z_]+=\S+)*)[ \t]+([a-z][a-z0-9-]*)\b"
        for m in re.finditer(pattern, f.read_text(), re.MULTILINE):
            found.add(m.group(2))
        # and inside shell command strings: bash -c 'make build && make ptf ...'
        found.update(re.findall(r"(?:['\"(]|&&)[ \t]*make[ \t]+([a-z][a-z0-9-]*)\b", f.read_text()))
    return found


@needs_make
def test_every_make_target_in_the_docs_exists() -> None:
    targets = doc_make_targets()
    assert {"build", "ptf", "ptf-fabric", "docker-build", "docker-test", "docker-demo", "docker-ptf"} <= targets, \
        "docs/targets.md should name the build, PTF and Docker targets"
    for target in sorted(targets):
        out = make("-n", target)
        assert out.returncode == 0, f"make -n {target}: {out.stderr.strip()}"


@needs_make
def test_unknown_make_target_fails() -> None:
    """The check above can fail: make -n refuses a target that does not exist."""
    assert make("-n", "no-such-target").returncode != 0


# --- make build -----------------------------------------------------------------------------------
@needs_make
def test_make_build_with_softswitch(tmp_path: Path) -> None:
    """Without p4c, make build compiles with softswitch: P4Info (text) and its device config, and says so."""
    out_dir = tmp_path / "mrc_switch"
    out = make(f"BUILD_DIR={out_dir}", "P4C=/nonexistent/p4c-bm2-ss", "build", timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "with softswitch" in out.stdout
    assert (out_dir / "COMPILER").read_text().strip() == "softswitch"
    assert not (out_dir / "bmv2.json").exists()
    assert (out_dir / "softswitch.json").stat().st_size > 0

    from google.protobuf import text_format
    from p4.config.v1 import p4info_pb2

    info = text_format.Parse((out_dir / "p4info.txtpb").read_text(), p4info_pb2.P4Info())
    tables = {t.preamble.name for t in info.tables}
    assert P4.T_INGRESS_SRV6_USID_UN in tables and P4.T_INGRESS_ROUTING_ROUTE_V6 in tables, sorted(tables)

    again = make(f"BUILD_DIR={out_dir}", "P4C=/nonexistent/p4c-bm2-ss", "build")
    assert again.returncode == 0 and "softswitch compile" not in again.stdout, "up-to-date build recompiled"
    assert "ready (compiler: softswitch)" in again.stdout


@needs_make
def test_make_build_after_softswitch_compile_names_its_compiler(tmp_path: Path) -> None:
    """README's `softswitch compile p4src/mrc_switch.p4 -o build/mrc_switch` leaves an up-to-date build
    with no COMPILER record; `make build` then records softswitch instead of printing an empty name."""
    out_dir = tmp_path / "mrc_switch"
    done = subprocess.run([sys.executable, "-m", "softswitch", "compile", "p4src/mrc_switch.p4", "-o", str(out_dir)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (out_dir / "COMPILER").exists()
    out = make(f"BUILD_DIR={out_dir}", "P4C=/nonexistent/p4c-bm2-ss", "build")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "softswitch compile" not in out.stdout, "up-to-date build recompiled"
    assert "ready (compiler: softswitch)" in out.stdout, out.stdout + out.stderr
    assert out.stderr == "", out.stderr
    assert (out_dir / "COMPILER").read_text().strip() == "softswitch"


@needs_make
def test_make_build_runs_p4c_with_the_documented_command_line(tmp_path: Path) -> None:
    """With a p4c-bm2-ss on PATH, make build calls it with exactly the issue's flags (real p4c: Docker)."""
    stand_in, _runs = _stand_in_p4c(tmp_path)
    argv_log = tmp_path / "argv"
    out_dir = tmp_path / "mrc_switch"
    env = dict(os.environ, **stand_in)
    out = make(f"BUILD_DIR={out_dir}", "build", env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "with p4c-bm2-ss" in out.stdout
    assert argv_log.read_text().split("\n")[:-1] == [
        "--arch", "v1model", "-o", f"{out_dir}/bmv2.json", "--p4runtime-files", f"{out_dir}/p4info.txtpb",
        "--pp", f"{out_dir}/mrc_switch.pp.p4", "p4src/mrc_switch.p4"]
    assert (out_dir / "COMPILER").read_text().strip() == "p4c"


def _stand_in_p4c(tmp_path: Path, fail: bool = False) -> tuple[dict[str, str], Path]:
    """A p4c-bm2-ss stand-in on PATH that counts its runs, records its last argv (``tmp_path/argv``) and
    writes the outputs where p4c would (or fails as p4c does on an error); the real compiler runs in
    the Docker image."""
    fake = tmp_path / "bin" / "p4c-bm2-ss"
    fake.parent.mkdir(exist_ok=True)
    runs = tmp_path / "runs"
    body = ("echo 'x.p4(3): [--Werror=type-error] error: bad' >&2; exit 1\n" if fail else
            "while [ $# -gt 0 ]; do case $1 in -o) echo '{}' > \"$2\"; shift;;"
            " --p4runtime-files) echo 'pkg_info { arch: \"v1model\" }' > \"$2\"; shift;;"
            " --pp) : > \"$2\"; shift;; esac; shift; done\n")
    fake.write_text("#!/bin/sh\necho run >> " + str(runs) + "\nprintf '%s\\n' \"$@\" > " + str(tmp_path / "argv")
                    + "\n" + body)
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    return {"PATH": f"{fake.parent}{os.pathsep}{os.environ['PATH']}"}, runs


def test_bmv2_pipeline_compiles_when_its_outputs_are_missing_or_stale(tmp_path: Path, monkeypatch) -> None:
    """``mrc-fabric demo --target bmv2`` and ``TARGET=bmv2`` test runs need no ``make build`` first:
    with p4c on PATH the bmv2 plugin compiles the program when p4c's outputs are missing or older than
    a ``.p4`` file of it, once (not again while they are current), into ``build/<program>/``."""
    from mrc_fabric.targets import get_target

    env, runs = _stand_in_p4c(tmp_path)
    monkeypatch.setenv("PATH", env["PATH"])
    src_dir = tmp_path / "p4"
    (src_dir / "include").mkdir(parents=True)
    prog, inc = src_dir / "prog.p4", src_dir / "include" / "defs.p4"
    prog.write_text("#include \"include/defs.p4\"\n")
    inc.write_text("// defs\n")
    out = tmp_path / "build" / "prog"
    bm = get_target("bmv2")
    cfg = bm.pipeline(prog, build_dir=out)
    assert cfg.p4info.pkg_info.arch == "v1model" and cfg.device_config == b"{}\n"
    assert runs.read_text().count("run") == 1 and (out / "COMPILER").read_text().strip() == "p4c"
    bm.pipeline(prog, build_dir=out)
    assert runs.read_text().count("run") == 1  # current: not compiled again
    later = (out / "bmv2.json").stat().st_mtime + 5
    os.utime(inc, (later, later))  # an include changed after the build
    bm.pipeline(prog, build_dir=out)
    assert runs.read_text().count("run") == 2
    assert not [p.name for p in out.iterdir() if p.name.startswith(".p4c-")]  # no compile folder left


def test_bmv2_pipeline_compile_error_is_reported_with_p4cs_words(tmp_path: Path, monkeypatch) -> None:
    from controller.session import SessionError
    from mrc_fabric.targets import get_target

    env, _runs = _stand_in_p4c(tmp_path, fail=True)
    monkeypatch.setenv("PATH", env["PATH"])
    prog = tmp_path / "prog.p4"
    prog.write_text("control c() { apply {} }\n")
    with pytest.raises(SessionError, match=r"p4c-bm2-ss failed on .*prog\.p4:\nx\.p4\(3\): .*error: bad"):
        get_target("bmv2").pipeline(prog, build_dir=tmp_path / "out")
    assert not (tmp_path / "out" / "bmv2.json").exists()
