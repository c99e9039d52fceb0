"""Fallback bound on a run's total memory where no cgroup is writable: poll its process tree.

Every ``POLL_S`` the launcher reads ``/proc/N/stat`` of every host process, follows parent
links down from the run's first process (under bwrap, orphans are re-parented to bwrap's
init, which is in the tree) and sums their resident set sizes. Above the cap it SIGKILLs
the tree, and the runner kills the process group and bwrap's init (the pid namespace).

What this guarantees, and what it does not:
- A sampled total above ``total_memory_bytes`` ends the run within one poll. Between two
  polls the run can grow by what its processes fault in during ``POLL_S`` plus one scan
  (about 0.6 ms for 90 host processes), per core it runs on; the tests measure it.
- RSS counts pages shared by several processes (copy-on-write after ``fork``, libraries)
  once per process, so the sum over-counts: a run is killed early, never late, for them.
- Not counted: tmpfs files (bounded by ``tmpfs_bytes`` per mount), memfds and System V
  shared memory that no process maps, page cache, and kernel memory.
- The kernel's hard bound stays per process: at most ``nproc`` processes (RLIMIT_NPROC on
  the run's own uid) of ``memory_bytes`` address space each (RLIMIT_AS).
"""

from __future__ import annotations

import os
import signal

from fpa.sandbox.limits import Limits

POLL_S = 0.01
PAGE = os.sysconf("SC_PAGE_SIZE")


class WatchdogBound:
    """Available everywhere /proc is: the runner's polling loop does the work."""

    name = "watchdog"
    interval_s = POLL_S

    def describe(self) -> str:
        return (f"{self.name}: the launcher sums the RSS of the run's process tree every "
                f"{POLL_S * 1000:.0f} ms and kills it above the cap")  # fmt: skip

    def start(self, limits: Limits) -> WatchdogRun:
        return WatchdogRun(limits.total_memory_bytes)


class WatchdogRun:
    interval_s = POLL_S
    prefix: tuple[str, ...] = ()  # nothing to join: the launcher watches from outside

    def __init__(self, cap_bytes: int) -> None:
        self.cap_bytes = cap_bytes
        self.root: int | None = None
        self.pids: list[int] = []
        self.peak = 0

    def attach(self, pid: int) -> None:
        self.root = pid

    def over(self) -> bool:
        if self.root is None:
            return False
        self.pids, total = tree_rss(self.root)
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
        """Nothing to release."""


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
