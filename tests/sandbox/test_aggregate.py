"""Adversarial: one program's TOTAL memory and processes are bounded, not only each process's.

Each attack runs under every mechanism that bounds the total here (the first cgroup
version that works, and the watchdog, which works everywhere), forced by
``Sandbox(aggregate=...)``. A meter outside the sandbox samples the memory that every
host process of the run owns: its anonymous and shared-memory proportional set size (PSS:
a page shared by k processes counts 1/k to each) and swap. File pages (the interpreter,
libraries) are page cache shared with the host, not the run's, and are left out.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest
from sandbox_helpers import FORK_BOMB, TEST_LIMITS, Meter, host_pids_with, require_sandbox

from fpa.grading.code import grade_code_many
from fpa.sandbox import Sandbox, bound, sandbox_problem, watchdog
from fpa.sandbox.check import aggregate_report
from fpa.sandbox.limits import MiB

CAP = 512 * MiB
CHILDREN, CHILD_MIB = 4, 200  # 800 MiB in all: each child alone is allowed, together they are not
HOG_LIMITS = dataclasses.replace(TEST_LIMITS, timeout_s=30, memory_bytes=1024 * MiB, total_memory_bytes=CAP)
# What the watchdog lets through between two polls: pages faulted in during one poll and
# one /proc scan, on each core (docs/sandbox.md). Generous for a loaded 2-core machine.
WATCHDOG_WINDOW = 128 * MiB
# What the meter can count twice: it reads the run's processes one after another, not at one
# instant, so a child read just before the kernel kills it and pages another child faults in
# after that, read later, add up (one cgroup1 run read 512.1 MiB under the kernel's 512.0).
METER_WINDOW = 32 * MiB
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "lcb" / "test6_fixture.jsonl"

FORKED_HOGS = """
import os, sys, time
children, mib, hold_s = int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
for _ in range(children):
    if os.fork() == 0:
        block = bytearray(mib << 20)  # calloc'd: the pages arrive when touched
        for i in range(0, len(block), 4096):
            block[i] = 1
        print("touched", flush=True)
        time.sleep(hold_s)
        os._exit(0)
for _ in range(children):
    os.wait()
"""


@pytest.fixture(params=["cgroup", "watchdog"])
def mechanism(request) -> str:
    """Each mechanism in turn, on a host where the sandbox works (else skip, or fail under CI)."""
    require_sandbox(sandbox_problem())
    return "watchdog" if request.param == "watchdog" else request.getfixturevalue("cgroup_name")


class PeakMeter(Meter):
    """Samples the memory owned by all host processes whose command line holds ``marker``."""

    def __init__(self, marker: str) -> None:
        super().__init__()
        self.marker, self.peak, self.most_processes = marker, 0, 0

    def sample(self) -> None:
        pids = host_pids_with(self.marker)
        self.most_processes = max(self.most_processes, len(pids))
        self.peak = max(self.peak, sum(map(_owned_bytes, pids)))


OWNED = ("Pss_Anon:", "Pss_Shmem:", "SwapPss:")


def _owned_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as handle:
            return sum(int(line.split()[1]) * 1024 for line in handle if line.startswith(OWNED))
    except OSError:
        return 0


@pytest.mark.parametrize("mode", ["bwrap", "none"])
def test_forked_memory_hogs_are_killed_below_the_total_cap(mechanism, mode):
    marker = f"fpa-hogs-{uuid.uuid4().hex}"
    with pytest.warns(RuntimeWarning) if mode == "none" else contextlib.nullcontext():
        sandbox = Sandbox(HOG_LIMITS, mode=mode, aggregate=mechanism)
    with PeakMeter(marker) as meter:
        result = sandbox.run_python(FORKED_HOGS, args=[marker, str(CHILDREN), str(CHILD_MIB), "60"])
    allowed = CAP + (WATCHDOG_WINDOW if mechanism == "watchdog" else 0)
    print(f"{mechanism} {mode}: meter peak {meter.peak / MiB:.1f} MiB, own peak "
          f"{result.memory_peak_bytes / MiB:.1f} MiB, cap {CAP / MiB:.0f} MiB, wall {result.wall_s:.2f} s")
    assert result.memory_exceeded and not result.ok and not result.timed_out, result
    assert result.stdout.count("touched") < CHILDREN  # not every child got its memory
    assert 0 < meter.peak <= allowed + METER_WINDOW, (meter.peak, allowed)
    assert result.memory_peak_bytes <= allowed
    if mechanism != "watchdog":  # the kernel's own count never passes the cap
        assert result.memory_peak_bytes <= CAP
    assert host_pids_with(marker) == []


def test_a_program_within_the_total_cap_is_untouched(mechanism):
    sandbox = Sandbox(HOG_LIMITS, aggregate=mechanism)
    result = sandbox.run_python(FORKED_HOGS, args=["fpa-small", "2", "100", "0.5"])  # 200 MiB for 0.5 s
    assert result.ok and result.stdout == "touched\ntouched\n" and not result.memory_exceeded, result
    assert 200 * MiB <= result.memory_peak_bytes < CAP




def test_fork_bomb_is_bounded_in_total(mechanism):
    marker = f"fpa-bomb-{uuid.uuid4().hex}"
    sandbox = Sandbox(TEST_LIMITS, aggregate=mechanism)
    with PeakMeter(marker) as meter:
        result = sandbox.run_python(FORK_BOMB, args=[marker, str(TEST_LIMITS.nproc)], timeout_s=10)
    count, reason = result.stdout.split(" ", 1)
    assert int(count) < TEST_LIMITS.nproc and reason.strip() == "Resource temporarily unavailable"
    assert meter.most_processes <= TEST_LIMITS.nproc
    assert host_pids_with(marker) == []


def test_killed_for_memory_is_graded_failed_with_its_reason(mechanism):
    """One process over the total cap and under its own address-space limit: only the total bound kills it.
    It does not fork: LCB's ``reliability_guard`` sets ``os.fork`` to None, so a forking program is a runtime
    error there and here."""
    hog = textwrap.dedent(
        """
        import time
        block = bytearray(700 << 20)
        for i in range(0, len(block), 4096):
            block[i] = 1
        time.sleep(5)  # held: the watchdog sees it even when its polls are late
        print(sum(map(int, input().split())))
        """
    )
    sandbox = Sandbox(HOG_LIMITS, aggregate=mechanism)
    assert grade_code_many("livecodebench", [(hog, "fx_stdin_sum")], data_path=FIXTURE, sandbox=sandbox) == [
        (False, "lcb_memory_exceeded")
    ]


def test_the_self_check_names_the_mechanism():
    lines = aggregate_report()
    chosen = bound.memory_bound()
    assert lines[0].endswith(f": {chosen}") and len(lines) == 1 + len(bound.BOUNDS)
    assert any(line.startswith(f"  * {chosen}: ") for line in lines)
    out = subprocess.run([sys.executable, "-m", "fpa.sandbox"], capture_output=True, text=True, timeout=60).stdout
    assert f"aggregate bound (total memory and processes of one run): {chosen}" in out


def test_every_mechanism_is_usable_or_says_why():
    for name in bound.BOUNDS:
        found = bound.probe(name)
        if isinstance(found, str):
            with pytest.raises(OSError, match=f"aggregate bound '{name}' does not work here"):
                Sandbox(TEST_LIMITS, aggregate=name, checked=True)
        else:
            assert found.name == name
    assert not isinstance(bound.probe("watchdog"), str)
    with pytest.raises(ValueError, match=re.escape(f"Sandbox.aggregate: expected one of {list(bound.BOUNDS)}, got")):
        Sandbox(TEST_LIMITS, aggregate="ulimit", checked=True)


def test_watchdog_finds_the_whole_tree():
    source = "import os, time\nif os.fork() == 0:\n    b = bytearray(64 << 20)\n    b[::4096] = b'x' * 16384\n" \
             "time.sleep(30)"
    child = subprocess.Popen([sys.executable, "-c", source])
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            pids, total = watchdog.tree_rss(child.pid)
            if len(pids) == 2 and total > 64 * MiB:
                break
            time.sleep(0.05)
        assert len(pids) == 2 and child.pid in pids and total > 64 * MiB
    finally:
        for pid in watchdog.tree_rss(child.pid)[0]:
            os.kill(pid, 9)
        child.wait()

