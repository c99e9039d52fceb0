"""Per-run cgroups: the kernel bounds the total memory and process count of one run.

cgroup v2 (``cgroup2``): a child of the launcher's own cgroup with ``memory.max``,
``memory.swap.max`` = 0, ``pids.max`` and ``memory.oom.group`` = 1 (the OOM killer takes
the whole run). It needs the memory and pids controllers in the launcher's cgroup's
``cgroup.subtree_control``: true at the top of a hierarchy as root, and in a delegated
subtree (SLURM's job cgroup, ``systemd-run -p Delegate=yes``) once enabled there; a
delegated cgroup's own processes first move into a leaf child, ``fpa-launcher``.

cgroup v1 (``cgroup1``): a child of the launcher's cgroup in the memory hierarchy
(``memory.limit_in_bytes``, and ``memory.memsw.limit_in_bytes`` so swap counts too) and
one in the pids hierarchy (``pids.max``). v1's OOM killer kills one process, not the run;
the launcher polls ``memory.oom_control`` and kills the rest (``CgroupRun.over``).

A run joins its cgroups before any of it starts: its command line begins with
``sh -c 'echo $$ > .../cgroup.procs ...; exec "$@"'`` (paths passed as arguments), so
prlimit, bwrap and the program inherit the cgroups. A fork fails with EAGAIN at
``pids.max``; memory over the cap is reclaimed, then OOM-killed.
"""

from __future__ import annotations

import errno
import itertools
import logging
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from fpa.sandbox import janitor
from fpa.sandbox.bwrap import tool
from fpa.sandbox.limits import Limits

log = logging.getLogger("fpa.sandbox")
PREFIX = "fpa-sandbox-"
POLL_S = 0.01  # how often the launcher reads the OOM-kill count
RMDIR_WAIT_S = 2.0  # a cgroup is busy for a moment after its last process is reaped
LAUNCHER_LEAF = "fpa-launcher"  # v2: where the launcher's cgroup puts its own processes (see enable_v2_controllers)
JOIN = 'for procs in "$@"; do [ "$procs" = -- ] && break; echo $$ > "$procs" || exit 125; shift; done; shift; exec "$@"'
_counter = itertools.count()


@dataclass(frozen=True)
class Flavour:
    """What one cgroup version calls each file; ``optional`` files may be absent (old kernels)."""

    name: str
    controllers: tuple[str, ...]  # v1: one hierarchy each; v2: one hierarchy ("")
    limits: tuple[tuple[str, str, str], ...]  # (controller, file, Limits field or a constant)
    optional: frozenset[str]
    oom_file: str  # holds "oom_kill N"
    peak_file: str


V2 = Flavour(
    name="cgroup2",
    controllers=("",),
    limits=(("", "memory.max", "total_memory_bytes"), ("", "memory.swap.max", "=0"),
            ("", "pids.max", "nproc"), ("", "memory.oom.group", "=1")),
    optional=frozenset({"memory.swap.max", "memory.oom.group", "memory.peak"}),
    oom_file="memory.events",
    peak_file="memory.peak",
)  # fmt: skip
V1 = Flavour(
    name="cgroup1",
    controllers=("memory", "pids"),
    limits=(("memory", "memory.limit_in_bytes", "total_memory_bytes"),
            ("memory", "memory.memsw.limit_in_bytes", "total_memory_bytes"), ("pids", "pids.max", "nproc")),
    optional=frozenset({"memory.memsw.limit_in_bytes"}),
    oom_file="memory.oom_control",
    peak_file="memory.max_usage_in_bytes",
)  # fmt: skip


class CgroupBound:
    """Where this process can make per-run cgroups: ``parents[controller]`` is the directory."""

    def __init__(self, flavour: Flavour) -> None:
        self.flavour = flavour
        self.name = flavour.name
        self.parents = {controller: own_cgroup_dir(flavour, controller) for controller in flavour.controllers}
        if flavour is V2:
            enable_v2_controllers(self.parents[""])
        janitor.remove_dead_cgroups(set(self.parents.values()), PREFIX)
        self.start(Limits()).close()  # detect by trying: make one, limit it, remove it

    def describe(self) -> str:
        dirs = sorted(set(self.parents.values()))
        files = ", ".join(file for _, file, _ in self.flavour.limits)
        return f"{self.name}: a cgroup per run under {', '.join(dirs)} ({files})"

    def start(self, limits: Limits) -> CgroupRun:
        pid = os.getpid()  # named like staging dirs, so that the janitor knows when the owner is gone
        name = f"{PREFIX}{pid}-{janitor.start_time(pid)}-{next(_counter)}"
        run = CgroupRun(self.flavour, {c: os.path.join(parent, name) for c, parent in self.parents.items()})
        try:
            for directory in run.dirs.values():
                os.mkdir(directory)
            for controller, file, value in self.flavour.limits:
                setting = value[1:] if value.startswith("=") else str(getattr(limits, value))
                _write(Path(run.dirs[controller], file), setting, optional=file in self.flavour.optional)
        except BaseException:
            run.close()
            raise
        return run


class CgroupRun:
    """One run's cgroups; ``prefix`` is the command that puts the run into them."""

    interval_s = POLL_S

    def __init__(self, flavour: Flavour, dirs: dict[str, str]) -> None:
        self.flavour = flavour
        self.dirs = dirs
        self.memory_dir = dirs[flavour.controllers[0]]
        procs = [os.path.join(directory, "cgroup.procs") for directory in dirs.values()]
        self.prefix = [tool("sh"), "-c", JOIN, "fpa-cgroup-join", *procs, "--"]

    def attach(self, pid: int) -> None:
        """Nothing to do: the run joined its cgroups itself before starting."""

    def oom_killed(self) -> bool:
        """Has the OOM killer acted in this run (its total memory reached the cap)?"""
        return _counter_of(Path(self.memory_dir, self.flavour.oom_file), "oom_kill") > 0

    over = oom_killed  # polled: the kernel holds the cap, the launcher only ends the run

    def peak_bytes(self) -> int | None:
        try:
            return int(Path(self.memory_dir, self.flavour.peak_file).read_text())
        except (OSError, ValueError):
            return None

    def kill(self) -> None:
        """SIGKILL every process in the run's cgroups (v1's OOM killer took only one)."""
        for directory in self.dirs.values():
            for pid in _procs(directory):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def close(self) -> None:
        """Remove the run's cgroups (they are empty once ``wait_group`` has returned)."""
        deadline = time.monotonic() + RMDIR_WAIT_S
        for directory in self.dirs.values():
            while True:
                try:
                    os.rmdir(directory)
                    break
                except FileNotFoundError:
                    break
                except OSError as err:  # EBUSY: the last process is still being torn down
                    if time.monotonic() > deadline:  # an empty cgroup left behind costs little
                        log.warning("fpa.sandbox: could not remove cgroup %s: %s", directory, err.strerror)
                        break
                    self.kill()
                    time.sleep(0.005)


def own_cgroup_dir(flavour: Flavour, controller: str) -> str:
    """The directory of this process's own cgroup in the hierarchy of ``controller`` ("" = v2)."""
    mounts = _cgroup_mounts()
    key = "cgroup2" if flavour is V2 else controller
    if key not in mounts:
        raise OSError(f"no {flavour.name} hierarchy{' for ' + controller if controller else ''} is mounted")
    mountpoint, mount_root = mounts[key]
    own = _own_cgroups().get(controller)
    if own is None:
        raise OSError(f"/proc/self/cgroup names no {flavour.name} cgroup{' for ' + controller if controller else ''}")
    if not (own == mount_root or own.startswith(mount_root.rstrip("/") + "/")):
        raise OSError(f"own cgroup {own} is outside the mounted part {mount_root} of {mountpoint}")
    return os.path.join(mountpoint, own[len(mount_root):].lstrip("/")).rstrip("/")


def _cgroup_mounts() -> dict[str, tuple[str, str]]:
    """``{"cgroup2" | v1 controller: (mount point, root of the mount)}`` from /proc/self/mountinfo."""
    mounts: dict[str, tuple[str, str]] = {}
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields, _, tail = line.partition(" - ")
        parts, (fstype, _source, options) = fields.split(), tail.split()[:3]
        root, mountpoint = parts[3], parts[4].replace("\\040", " ")
        if fstype == "cgroup2":
            mounts.setdefault("cgroup2", (mountpoint, root))
        elif fstype == "cgroup":
            for option in options.split(","):
                mounts.setdefault(option, (mountpoint, root))
    return mounts


def _own_cgroups() -> dict[str, str]:
    """``{controller: path}`` of this process ("" is the v2 entry)."""
    cgroups = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            cgroups[controller] = path
    return cgroups


def enable_v2_controllers(directory: str, wanted: tuple[str, ...] = ("memory", "pids")) -> None:
    """Give the children of ``directory`` the ``wanted`` controllers. v2 lets a cgroup other
    than the root do that only while it holds no processes, and a delegated cgroup (SLURM's
    task cgroup) holds the launcher and its shell: those move into a leaf child first."""
    available = set(Path(directory, "cgroup.controllers").read_text().split())
    if not set(wanted) <= available:  # bound to a v1 hierarchy, or not delegated to us
        missing = sorted(set(wanted) - available)
        are = "controllers are" if len(missing) > 1 else "controller is"
        raise OSError(f"the {' and '.join(missing)} {are} not available in {directory} "
                      f"(cgroup.controllers: {' '.join(sorted(available)) or 'none'})")
    control = Path(directory, "cgroup.subtree_control")
    enabling = " ".join(f"+{c}" for c in sorted(set(wanted) - set(control.read_text().split())))
    if not enabling:
        return
    try:
        control.write_text(enabling)
    except OSError as err:
        if err.errno != errno.EBUSY:
            raise OSError(f"cannot write {enabling!r} to {control}: {err.strerror}") from err
        _move_processes(directory, os.path.join(directory, LAUNCHER_LEAF))
        _write(control, enabling)


def _move_processes(source: str, leaf: str) -> None:
    """Move every process of ``source`` into ``leaf`` (made if missing); new forks follow their parents."""
    os.makedirs(leaf, exist_ok=True)
    for _ in range(10):  # a process forked meanwhile lands in ``source``; move it too
        pids = _procs(source)
        if not pids:
            return
        for pid in pids:
            try:
                Path(leaf, "cgroup.procs").write_text(str(pid))
            except ProcessLookupError:  # exited meanwhile
                pass
    raise OSError(f"cannot empty {source}: processes keep arriving")


def _write(path: Path, value: str, *, optional: bool = False) -> None:
    try:
        path.write_text(value)
    except FileNotFoundError as err:
        if not optional:
            raise OSError(f"no {path.name} in {path.parent} (its controller is not enabled there)") from err
    except OSError as err:
        raise OSError(f"cannot write {value!r} to {path}: {err.strerror}") from err


def _counter_of(path: Path, key: str) -> int:
    try:
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except OSError:
        pass
    return 0


def _procs(directory: str) -> list[int]:
    try:
        return [int(pid) for pid in Path(directory, "cgroup.procs").read_text().split()]
    except OSError:
        return []
