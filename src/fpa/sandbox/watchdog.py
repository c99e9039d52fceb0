"""Fallback bound on a run's total memory where no cgroup is writable: poll its process tree.

Every ``POLL_S`` the launcher reads ``/proc/N/stat`` of every host process, follows parent
links down from the run's first process (under bwrap, orphans are re-parented to bwrap's
init, which is in the tree) and sums their resident set sizes, plus what the run holds that
no RSS shows (``fpa.sandbox.unmapped``: memfds, System V shared memory and message queues,
tmpfs). Above the cap it SIGKILLs the tree, and the runner kills the process group and
bwrap's init (the pid namespace).

What this guarantees, and what it does not:
- A sampled total above ``total_memory_bytes`` ends the run within one poll. Between two
  polls the run can grow by what its processes fault in during ``POLL_S`` plus one scan
  (about 0.6 ms for 90 host processes), per core it runs on; the tests measure it.
- RSS counts pages shared by several processes (copy-on-write after ``fork``, libraries)
  once per process, so the sum over-counts: a run is killed early, never late, for them.
- Not counted: page cache and kernel memory (pipe and socket buffers among it); System V IPC
  where the launcher cannot enter the run's namespace and the user opted in to that
  (``unmapped.IPC_OPT_IN``; without the opt-in the watchdog refuses to start there).
- The kernel's hard bound stays per process: at most ``nproc`` processes (RLIMIT_NPROC on
  the run's own uid) of ``memory_bytes`` address space each (RLIMIT_AS).
"""

from __future__ import annotations

import logging
import os
import signal

from fpa.sandbox.limits import Limits
from fpa.sandbox.unmapped import IPC_OPT_IN, UnmappedMeter, can_enter_namespaces

POLL_S = 0.01
PAGE = os.sysconf("SC_PAGE_SIZE")
log = logging.getLogger("fpa.sandbox")


class WatchdogBound:
    """Available everywhere /proc is: the runner's polling loop does the work. Where the launcher
    cannot enter a run's IPC namespace (no CAP_SYS_ADMIN), only with the user's opt-in."""

    name = "watchdog"
    interval_s = POLL_S

    def __init__(self) -> None:
        self.count_ipc = can_enter_namespaces()
        variable, value = IPC_OPT_IN
        if not self.count_ipc and os.environ.get(variable) != value:
            raise OSError(f"the launcher cannot enter a run's IPC namespace (no CAP_SYS_ADMIN), so System V "
                          f"shared memory and message queues would pass the cap uncounted; run as root, give the "
                          f"launcher a writable cgroup, or set {variable}={value} to accept that")

    def describe(self) -> str:
        ipc = ("System V shared memory and message queues" if self.count_ipc else
               f"NOT System V shared memory nor message queues ({'='.join(IPC_OPT_IN)})")
        return (f"{self.name}: the launcher sums the RSS of the run's process tree every "
                f"{POLL_S * 1000:.0f} ms, plus its memfds, tmpfs and {ipc}, and kills it above the cap")

    def start(self, limits: Limits) -> WatchdogRun:
        return WatchdogRun(limits.total_memory_bytes, self.count_ipc)


class WatchdogRun:
    interval_s = POLL_S
    prefix: tuple[str, ...] = ()  # nothing to join: the launcher watches from outside

    def __init__(self, cap_bytes: int, count_ipc: bool = True) -> None:
        self.cap_bytes = cap_bytes
        self.root: int | None = None
        self.pids: list[int] = []
        self.peak = 0
        self.meter = UnmappedMeter(count_ipc)

    def attach(self, pid: int) -> None:
        self.root = pid

    def over(self) -> bool:
        """The sampled total above the cap; a total that cannot be read counts as over (fail closed)."""
        if self.root is None:
            return False
        self.pids, total = tree_rss(self.root)
        try:
            total += self.meter.bytes(self.pids)
        except OSError as err:
            log.error("fpa.sandbox: watchdog cannot count the run's memory outside its processes (%s); killing it",
                      err)
            return True
        self.peak = max(self.peak, total)
        return total > self.cap_bytes

    def peak_bytes(self) -> int | None:
        return self.peak

    def oom_killed(self) -> bool:
        """The kernel enforces no total here; only ``over`` ends a run."""
        return False

    def kill(self) -> None:
        """SIGKILL the tree of the last poll (a setsid'd child outside the group too)."""
        for pid in self.pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def close(self) -> None:
        self.meter.close()


def tree_rss(root: int) -> tuple[list[int], int]:
    """The pids of ``root`` and its descendants, and the sum of their resident bytes."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:  # gone since the listing
            continue
        fields = stat[stat.rindex(b")") + 2 :].split()  # after "pid (comm) "; comm may hold spaces
        pid = int(entry.name)
        children.setdefault(int(fields[1]), []).append(pid)
        rss[pid] = int(fields[21]) * PAGE
    tree, todo = [], [root] if root in rss else []
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo.extend(children.get(pid, ()))
    return tree, sum(rss[pid] for pid in tree)
