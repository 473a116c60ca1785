"""Ctrl-C a command while it reads a program that never comes: shared by the CLI tests."""
from __future__ import annotations

import errno
import os
import signal
import subprocess
import time
from pathlib import Path


def interrupt_while_reading(cmd: list[str], fifo: Path, what: str = "the program") -> tuple[int, str]:
    """Run ``cmd`` (which reads the FIFO ``fifo``), send it SIGINT once it has opened the FIFO for
    reading, and return its exit code and stderr.  The read stays blocked for as long as the test needs,
    so the signal lands inside the compile/front end; the process is killed if it outlives the test."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    w = None
    try:
        deadline = time.monotonic() + 60
        while w is None and time.monotonic() < deadline:  # opens for writing once the reader has it open
            try:
                w = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as e:
                assert e.errno == errno.ENXIO, e
                assert p.poll() is None, p.communicate()
                time.sleep(0.05)
        assert w is not None, f"{what} was never opened"
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=30)
    finally:
        if w is not None:
            os.close(w)
        if p.poll() is None:
            p.kill()
            p.wait()
    return p.returncode, err


def interrupt_while_importing(cmd: list[str], tmp_path: Path) -> tuple[int, str]:
    """Run ``cmd`` (a console script or ``python -m``) and Ctrl-C it while it imports its commands: a
    ``yaml`` first on PYTHONPATH (every CLI's commands import it, no entry point does) reads a FIFO
    that nothing writes until the signal was sent, so the signal lands inside those imports."""
    fifo = tmp_path / "import-fifo"
    os.mkfifo(fifo)
    (tmp_path / "yaml.py").write_text(f"open({str(fifo)!r}).read()\n")
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(tmp_path)
    try:
        return interrupt_while_reading(cmd, fifo, "the stand-in yaml")
    finally:
        if old is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = old
