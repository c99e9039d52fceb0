"""Adversarial: memory that no process maps still counts towards a run's total under the watchdog.

Each hog touches its memory through a mapping, 48 MiB at a time, and unmaps it, so its RSS
stays small while what it holds grows: memfds kept open, System V shared memory segments
detached, files written to the sandbox's tmpfs. Before ``fpa.sandbox.unmapped`` the watchdog
let 360 MiB and 1 GiB of each pass a 256 MiB cap. A meter outside the sandbox samples the
host's ``Shmem`` (``/proc/meminfo``: memfds, System V shared memory and tmpfs together) above
its level before the run, so the peak is measured by the kernel's count, not the watchdog's.
"""

from __future__ import annotations

import dataclasses

import pytest
from sandbox_helpers import TEST_LIMITS, Meter, require_sandbox

from fpa.sandbox import Sandbox, bound, sandbox_problem, unmapped, watchdog
from fpa.sandbox.limits import MiB

CAP = 256 * MiB
LIMITS = dataclasses.replace(TEST_LIMITS, timeout_s=30, memory_bytes=1024 * MiB, fsize_bytes=64 * MiB,
                             tmpfs_bytes=768 * MiB, total_memory_bytes=CAP)
WATCHDOG_WINDOW = 128 * MiB  # as in test_aggregate: what one poll lets through on a loaded 2-core machine
CHUNK = """
import os, sys, time
total, chunk = int(sys.argv[1]) << 20, 48 << 20
held = 0
"""
HOGS = {
    "memfd": CHUNK + """
import mmap
fds = []
while held < total:
    fd = os.memfd_create("hog")
    os.ftruncate(fd, chunk)
    with mmap.mmap(fd, chunk) as view:  # touched through the mapping, then unmapped
        for i in range(0, chunk, 4096):
            view[i] = 1
    fds.append(fd)
    held += chunk
print("held", held >> 20, flush=True)
time.sleep(10)
""",
    "sysv_shm": CHUNK + """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
while held < total:
    shmid = libc.shmget(0, ctypes.c_size_t(chunk), 0o1600)  # IPC_PRIVATE, IPC_CREAT | 0600
    address = ctypes.c_void_p(libc.shmat(shmid, None, 0))
    ctypes.memset(address, 1, chunk)
    libc.shmdt(address)  # detached: no process maps it; it lives as long as the IPC namespace
    held += chunk
print("held", held >> 20, flush=True)
time.sleep(10)
""",
    "tmpfs": CHUNK + """
block = b"x" * chunk
while held < total:
    with open(f"/tmp/hog{held}" if held % (2 * chunk) else f"/sandbox/hog{held}", "wb") as out:
        out.write(block)
    held += chunk
print("held", held >> 20, flush=True)
time.sleep(10)
""",
}


class ShmemMeter(Meter):
    """The peak of the host's Shmem above its level when the meter started."""

    interval_s = 0.002

    def __init__(self) -> None:
        super().__init__()
        self.base, self.peak = _shmem(), 0

    def sample(self) -> None:
        self.peak = max(self.peak, _shmem() - self.base)


def _shmem() -> int:
    with open("/proc/meminfo") as handle:
        return next(int(line.split()[1]) * 1024 for line in handle if line.startswith("Shmem:"))


@pytest.fixture(params=["watchdog", "cgroup"])
def mechanism(request) -> str:
    require_sandbox(sandbox_problem())
    return "watchdog" if request.param == "watchdog" else request.getfixturevalue("cgroup_name")


@pytest.mark.alone  # the meter reads the host's Shmem, which another test's processes can grow
@pytest.mark.parametrize("hog", sorted(HOGS))
@pytest.mark.parametrize("mib", [360, 1024])
def test_unmapped_memory_counts_towards_the_cap(mechanism, hog, mib):
    sandbox = Sandbox(LIMITS, aggregate=mechanism)
    with ShmemMeter() as meter:
        result = sandbox.run_python(HOGS[hog], args=[str(mib)])
    print(f"{mechanism} {hog} {mib} MiB: host Shmem peak +{meter.peak / MiB:.1f} MiB, own peak "
          f"{result.memory_peak_bytes / MiB:.1f} MiB, cap {CAP / MiB:.0f} MiB, wall {result.wall_s:.2f} s")
    assert result.memory_exceeded and not result.timed_out and "held" not in result.stdout, result
    assert meter.peak <= CAP + WATCHDOG_WINDOW
    assert result.memory_peak_bytes <= CAP + WATCHDOG_WINDOW


def test_a_run_within_the_cap_is_untouched():
    require_sandbox(sandbox_problem())
    result = Sandbox(LIMITS, aggregate="watchdog").run_python(HOGS["sysv_shm"].replace("10)", "0)"), args=["96"])
    assert result.ok and result.stdout == "held 96\n", result
    assert 96 * MiB <= result.memory_peak_bytes < CAP


def test_without_cap_sys_admin_the_watchdog_refuses_unless_the_user_accepts(monkeypatch):
    monkeypatch.setattr(watchdog, "can_enter_namespaces", lambda: False)
    monkeypatch.delenv(unmapped.IPC_OPT_IN[0], raising=False)
    with pytest.raises(OSError, match=r"cannot enter a run's IPC namespace \(no CAP_SYS_ADMIN\).*set "
                                      r"FPA_SANDBOX_WATCHDOG_IPC=uncounted to accept that"):
        watchdog.WatchdogBound()
    bound.probe.cache_clear()
    try:
        with pytest.raises(OSError, match=r"^aggregate bound 'watchdog' does not work here: the launcher cannot enter"):
            Sandbox(LIMITS, aggregate="watchdog", checked=True)
    finally:
        bound.probe.cache_clear()  # the next test probes the real host again
    monkeypatch.setenv(*unmapped.IPC_OPT_IN)
    assert "NOT System V shared memory nor message queues (FPA_SANDBOX_WATCHDOG_IPC=uncounted)" in \
        watchdog.WatchdogBound().describe()


def test_the_self_check_says_what_the_watchdog_counts():
    found = bound.probe("watchdog")
    assert isinstance(found, str) or "plus its memfds, tmpfs and " in found.describe()
    if unmapped.can_enter_namespaces():
        assert "plus its memfds, tmpfs and System V shared memory and message queues" in found.describe()
