"""Adversarial: network, processes, signals and resources. Each is contained and bounded."""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
import uuid

import pytest
from sandbox_helpers import TEST_LIMITS, host_pids_with

from fpa.sandbox import Sandbox
from fpa.sandbox.limits import MiB

SLACK_S = 2.0  # wall-clock allowance over a timeout on a busy shared machine


def test_no_network_even_to_loopback(sandbox):
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    port, accepted = server.getsockname()[1], []

    def accept_loop(stop):
        while not stop.is_set():
            try:
                accepted.append(server.accept()[0])
            except (TimeoutError, OSError):
                pass

    stop = threading.Event()
    thread = threading.Thread(target=accept_loop, args=(stop,), daemon=True)
    thread.start()
    source = f"""
import socket
for family, addr in ((socket.AF_INET, ("127.0.0.1", {port})), (socket.AF_INET6, ("::1", {port}))):
    try:
        socket.create_connection(addr[:2], timeout=1).send(b"x"); print("CONNECTED")
    except OSError as err:
        print("FAILED", err.strerror)
print(sorted(name for _, name in socket.if_nameindex()))
"""
    try:
        result = sandbox.run_python(source)
    finally:
        stop.set()
        thread.join()
        server.close()
    assert accepted == [] and "CONNECTED" not in result.stdout
    assert result.stdout.count("FAILED") == 2 and result.stdout.splitlines()[-1] == "['lo']"


def test_fork_bomb_is_contained(sandbox):
    marker = f"fpa-forkbomb-{uuid.uuid4().hex}"
    source = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    start = time.monotonic()
    result = sandbox.run_python(source, args=[marker], timeout_s=1.5)
    assert result.timed_out and time.monotonic() - start < 1.5 + SLACK_S
    assert host_pids_with(marker) == []


def test_fork_bomb_hits_rlimit_nproc(sandbox):
    source = textwrap.dedent(
        """
        import os, time
        n = 0
        try:
            while True:
                if os.fork() == 0:
                    time.sleep(30)
                n += 1
        except OSError as err:
            print(n, err.strerror)
        """
    )
    result = sandbox.run_python(source, timeout_s=5)
    count, reason = result.stdout.split(" ", 1)
    assert int(count) < TEST_LIMITS.nproc and reason.strip() == "Resource temporarily unavailable"
    assert result.wall_s < 5  # exiting the program tears down the sleeping children at once


def test_memory_bomb_is_contained(sandbox):
    small = Sandbox(dataclasses.replace(TEST_LIMITS, memory_bytes=256 * MiB))  # touches at most that much
    source = "chunks = []\nwhile True:\n    chunks.append(bytearray(16 * 1024 * 1024))\n"
    result = small.run_python(source, timeout_s=5)
    assert result.returncode == 1 and "MemoryError" in result.stderr and not result.timed_out, result


def test_huge_allocation_fails_fast(sandbox):
    result = sandbox.run_python("x = bytearray(64 * 1024 ** 3)")
    assert "MemoryError" in result.stderr and result.wall_s < 5


def test_infinite_loop_times_out(sandbox):
    start = time.monotonic()
    result = sandbox.run_python("print('started', flush=True)\nwhile True:\n    pass", timeout_s=1)
    assert result.timed_out and result.killed_by_signal == signal.SIGKILL
    assert result.stdout == "started\n"  # output so far is kept
    assert 1 <= time.monotonic() - start < 1 + SLACK_S


def test_ignoring_sigterm_does_not_help(sandbox):
    source = "import signal, time\nfor s in (1, 2, 15):\n    signal.signal(s, signal.SIG_IGN)\ntime.sleep(60)"
    result = sandbox.run_python(source, timeout_s=1)
    assert result.timed_out and result.wall_s < 1 + SLACK_S


def test_cpu_limit_kills_busy_program(sandbox):
    sandbox = Sandbox(dataclasses.replace(TEST_LIMITS, cpu_s=1))
    result = sandbox.run_python("while True:\n    pass", timeout_s=20)
    assert not result.timed_out and result.killed_by_signal in (signal.SIGXCPU, signal.SIGKILL)


DOUBLE_FORK = """
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        if sys.argv[2] == "daemon":  # a proper daemon: nothing of ours stays open
            null = os.open("/dev/null", os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(300)", sys.argv[1]])
    os._exit(0)
print("parent done", flush=True)
if sys.argv[2] == "hang":
    time.sleep(60)
"""


@pytest.mark.parametrize("then", ["exit", "hang", "daemon"])
def test_orphaned_background_children_die_with_the_run(sandbox, then):
    marker = f"fpa-orphan-{uuid.uuid4().hex}"
    result = sandbox.run_python(DOUBLE_FORK, args=[marker, then], timeout_s=1.5)
    assert "parent done" in result.stdout
    assert result.timed_out == (then == "hang")
    assert result.wall_s < 1.5 + SLACK_S  # the orphan holding stdout does not keep us waiting
    assert host_pids_with(marker) == []  # gone by the time run() returns, not a moment later


def test_closing_stdout_and_running_on_still_times_out(sandbox):
    source = "import os, time\nos.close(1)\nos.close(2)\ntime.sleep(60)"
    result = sandbox.run_python(source, timeout_s=1)
    assert result.timed_out and result.wall_s < 1 + SLACK_S


def test_signalling_parents_and_host_processes_fails(sandbox):
    victim = subprocess.Popen(["sleep", "30"])
    source = textwrap.dedent(
        """
        import os, signal, sys
        for pid in [os.getppid(), 1, *map(int, sys.argv[1:])]:
            try:
                os.kill(pid, signal.SIGKILL)
                print("sent", pid)
            except OSError as err:
                print("failed", pid, err.strerror)
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError as err:
            print("failed -1", err.strerror)
        print("still here")
        """
    )
    try:
        result = sandbox.run_python(source, args=[str(os.getpid()), str(os.getppid()), str(victim.pid)])
        time.sleep(0.1)
        assert victim.poll() is None, "the sandbox killed a host process"
    finally:
        victim.kill()
        victim.wait()
    assert "still here" in result.stdout  # pid 1 (bwrap's init) shrugs off the kill
    for pid in (os.getpid(), os.getppid(), victim.pid):  # host pids do not exist inside
        assert f"failed {pid} No such process" in result.stdout


def test_filling_the_disk_is_bounded(sandbox):
    source = """
import os
total = 0
for directory in ("/sandbox", "/tmp", "/dev/shm"):
    for i in range(10_000):
        try:
            with open(f"{directory}/fill{i}", "wb") as handle:
                for _ in range(64):
                    handle.write(b"x" * (1 << 20))
                    handle.flush()
                    total += 1 << 20
        except OSError as err:
            if err.strerror != "File too large":
                break
print(total)
"""
    disk_before = shutil.disk_usage("/tmp").free
    result = sandbox.run_python(source, timeout_s=10)
    written = int(result.stdout)
    assert written <= 3 * TEST_LIMITS.tmpfs_bytes, written
    assert not result.timed_out
    # the host disk only moves with the other work on this machine, not by GBs
    assert disk_before - shutil.disk_usage("/tmp").free < 256 * MiB


def test_big_file_hits_rlimit_fsize(sandbox):
    source = "open('big', 'wb').write(b'x' * (9 * 1024 * 1024))"
    result = sandbox.run_python(source)
    assert result.killed_by_signal == signal.SIGXFSZ or "File too large" in result.stderr


def test_sandbox_dies_with_its_launcher(sandbox):
    """SIGKILL the Python process that runs the sandbox: no sandboxed process survives it."""
    marker = f"fpa-launcher-{uuid.uuid4().hex}"
    launcher = textwrap.dedent(
        f"""
        import sys
        from fpa.sandbox import Sandbox
        print("running", flush=True)
        Sandbox().run_python("import time; print('in', flush=True); time.sleep(300)", args=[{marker!r}], timeout_s=300)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", launcher], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "running\n"
        deadline = time.monotonic() + 10
        while not _running_python(marker) and time.monotonic() < deadline:  # not just bwrap
            time.sleep(0.05)
        assert _running_python(marker), "the sandboxed program never started"
    finally:
        proc.kill()
        proc.wait()
    deadline = time.monotonic() + 3
    while host_pids_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert host_pids_with(marker) == []


def _running_python(marker: str) -> bool:
    """The sandboxed program itself (not bwrap, whose argv also holds the marker) is running."""
    for pid in host_pids_with(marker):
        try:
            with open(f"/proc/{pid}/comm") as handle:
                if handle.read().startswith("python"):
                    return True
        except OSError:
            pass
    return False
