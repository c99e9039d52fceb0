"""Memory a run holds outside its processes' resident sets, which the watchdog adds to their RSS.

A cgroup is charged for these pages; no process's RSS counts them once nothing maps them.
Before this meter a run under the watchdog held 1 GiB past a 256 MiB cap in memfds or System
V shared memory, each touched through a mapping and then unmapped (tests/sandbox/test_unmapped.py):

- **memfds** an fd of a run's process holds open (``/proc/PID/fd/N`` links to ``/memfd:...``):
  the bytes allocated to each file, once per file (device and inode), however many fds or
  processes share it.
- **System V shared memory and message queues** of the run's IPC namespace (bwrap gives each
  run its own): the segments' resident and swapped bytes and the queues' bytes, read from
  ``/proc/sysvipc/shm`` and ``/proc/sysvipc/msg``, which show the reader's namespace. The
  polling thread enters the run's namespace with ``setns``, opens both, and returns to its own;
  that takes ``CAP_SYS_ADMIN`` (root, as in CI). Without it ``WatchdogBound`` refuses to start
  unless ``FPA_SANDBOX_WATCHDOG_IPC=uncounted`` says to run with System V IPC left uncounted.
- **tmpfs** the run's mount namespace has and the launcher's has not (bwrap's ``/tmp`` = ``/dev/shm``
  and ``/sandbox``): the bytes each holds (statvfs through ``/proc/PID/root``), deleted files
  still open included.

Pages both mapped and counted here (a mapped memfd, a file of the work dir in the page tables)
count twice: the sum errs towards killing early, as RSS does for shared pages. Not counted:
the launcher's own namespaces (``mode="none"`` shares them, so there this meter sees memfds only),
pipe and socket buffers and other kernel memory.
"""

from __future__ import annotations

import contextlib
import ctypes
import os

CLONE_NEWIPC = 0x08000000
CAP_SYS_ADMIN = 21
#: The opt-in to the watchdog without System V IPC counted, where namespaces cannot be entered.
IPC_OPT_IN = ("FPA_SANDBOX_WATCHDOG_IPC", "uncounted")
_libc = ctypes.CDLL(None, use_errno=True)


def can_enter_namespaces() -> bool:
    """``setns`` into another IPC namespace takes CAP_SYS_ADMIN in the caller's own user namespace."""
    with open("/proc/self/status") as handle:
        caps = next(line.split()[1] for line in handle if line.startswith("CapEff:"))
    return bool(int(caps, 16) >> CAP_SYS_ADMIN & 1)


class UnmappedMeter:
    """The unmapped bytes of one run; keeps the run's namespace fds until ``close``."""

    def __init__(self, count_ipc: bool) -> None:
        self.count_ipc = count_ipc
        self.own = {kind: os.stat(f"/proc/self/ns/{kind}").st_ino for kind in ("ipc", "mnt")}
        self._ipc_fds: dict[int, int] = {}  # namespace inode -> an fd on it
        self._host_devices = {device for device, _, _ in _mounts("self")}  # tmpfs the run did not make

    def bytes(self, pids: list[int]) -> int:
        memfds: dict[tuple[int, int], int] = {}
        mount_namespaces: dict[int, int] = {}  # inode -> a pid in it (its mounts change while bwrap sets up)
        for pid in pids:
            memfds.update(_memfds(pid))
            try:
                ipc, mnt = (os.stat(f"/proc/{pid}/ns/{kind}").st_ino for kind in ("ipc", "mnt"))
            except OSError:  # gone since the scan
                continue
            if self.count_ipc and ipc != self.own["ipc"] and ipc not in self._ipc_fds:
                with contextlib.suppress(OSError):  # gone since the scan
                    self._ipc_fds[ipc] = os.open(f"/proc/{pid}/ns/ipc", os.O_RDONLY | os.O_CLOEXEC)
            if mnt != self.own["mnt"]:
                mount_namespaces.setdefault(mnt, pid)
        tmpfs = [f"/proc/{pid}/root{point}" for pid in mount_namespaces.values()
                 for device, point, kind in _mounts(pid) if kind == "tmpfs" and device not in self._host_devices]
        return sum(memfds.values()) + sum(map(_sysvipc_bytes, self._ipc_fds.values())) + _tmpfs_bytes(tmpfs)

    def close(self) -> None:
        for fd in self._ipc_fds.values():
            os.close(fd)
        self._ipc_fds.clear()


def _memfds(pid: int) -> dict[tuple[int, int], int]:
    """(device, inode) -> allocated bytes of each memfd ``pid`` holds open."""
    found = {}
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return found
    for fd in fds:
        path = f"/proc/{pid}/fd/{fd}"
        try:
            if os.readlink(path).startswith("/memfd:"):
                info = os.stat(path)
                found[(info.st_dev, info.st_ino)] = info.st_blocks * 512
        except OSError:  # closed since the listing
            continue
    return found


def _setns(fd: int) -> None:
    if _libc.setns(fd, CLONE_NEWIPC) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"setns into an IPC namespace: {os.strerror(errno)}")


def _sysvipc_bytes(ns_fd: int) -> int:
    """Resident + swapped bytes of the System V shared memory, and bytes queued in the message
    queues, of the IPC namespace ``ns_fd``; the calling thread returns to its own namespace."""
    own = os.open("/proc/thread-self/ns/ipc", os.O_RDONLY | os.O_CLOEXEC)
    try:
        _setns(ns_fd)
        try:
            shm, msg = open("/proc/sysvipc/shm"), open("/proc/sysvipc/msg")  # bound to the namespace at open
        finally:
            _setns(own)
    finally:
        os.close(own)
    with shm, msg:
        return _column_sum(shm, ("rss", "swap")) + _column_sum(msg, ("cbytes",))


def _column_sum(handle, columns: tuple[str, ...]) -> int:
    header = handle.readline().split()
    where = [header.index(column) for column in columns]
    return sum(int(fields[i]) for fields in map(str.split, handle) for i in where)


def _mounts(pid: int | str) -> list[tuple[str, str, str]]:
    """(device, mount point, file system type) of each mount ``pid`` sees (``/proc/PID/mountinfo``)."""
    try:
        with open(f"/proc/{pid}/mountinfo") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return []
    mounts = []
    for line in lines:
        fields, _, rest = line.partition(" - ")
        fields = fields.split()
        mounts.append((fields[2], fields[4], rest.split()[0]))
    return mounts


def _tmpfs_bytes(points: list[str]) -> int:
    used, seen = 0, set()
    for point in points:
        try:
            device, stats = os.stat(point).st_dev, os.statvfs(point)
        except OSError:  # the run has ended
            continue
        if device not in seen:
            seen.add(device)
            used += (stats.f_blocks - stats.f_bfree) * stats.f_frsize
    return used
