"""Leftovers of runs whose launcher died: stuck bwrap processes and staging directories.

bwrap race: its child waits on an eventfd for the parent to write the uid map, and only
sets its parent-death signal after that. If the parent is SIGKILLed inside that window
(our timeout, or the launcher dying, which SIGKILLs bwrap through setpriv --pdeathsig),
the child waits forever, reparented to pid 1. Such a process has a sandbox uid, is
called bwrap and has ppid 1; a live run's bwrap processes still have their monitor as
parent (or are being torn down anyway), so killing them all is always right.

A staging directory is named after its owner's pid and start time; one whose owner is
gone is removed (its private mounts died with the owner's helper). So is a run's cgroup
(``fpa.sandbox.cgroup``), once empty: a launcher killed mid-run never removed it.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from pathlib import Path

from fpa.sandbox.bwrap import UID_BASE, UID_SPAN

STAGE_PREFIX = "fpa-sandbox-stage-"
STUCK_AFTER_S = 10.0


def _stat_fields(pid: int | str) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    head, _, rest = text.partition(" (")
    comm, _, tail = rest.rpartition(") ")
    return [head, comm, *tail.split()]


def start_time(pid: int) -> str | None:
    fields = _stat_fields(pid)
    return fields[21] if fields else None  # field 22: start time in clock ticks since boot


def kill_stuck_bwrap(min_age_s: float = STUCK_AFTER_S) -> list[int]:
    """SIGKILL orphaned bwrap processes of earlier runs; returns their pids."""
    killed = []
    now_ticks = float(Path("/proc/uptime").read_text().split()[0]) * os.sysconf("SC_CLK_TCK")
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            uid = entry.stat().st_uid
        except OSError:
            continue
        fields = _stat_fields(entry.name)
        if not fields or not UID_BASE <= uid < UID_BASE + UID_SPAN or fields[1] != "bwrap":
            continue
        orphan, alive = fields[3] == "1", fields[2] not in ("Z", "X")
        old = now_ticks - int(fields[21]) >= min_age_s * os.sysconf("SC_CLK_TCK")
        if orphan and alive and old:  # a run's own teardown takes milliseconds
            try:
                os.kill(int(entry.name), signal.SIGKILL)
                killed.append(int(entry.name))
            except ProcessLookupError:
                pass
    return killed


def stage_prefix() -> str:
    """Name prefix for this process's staging directories."""
    return f"{STAGE_PREFIX}{os.getpid()}-{start_time(os.getpid())}-"


def owner_is_gone(name: str, prefix: str) -> bool:
    """``name`` is ``prefix + "PID-STARTTIME-..."`` and that process no longer exists."""
    parts = name[len(prefix) :].split("-")
    return name.startswith(prefix) and len(parts) >= 3 and parts[0].isdigit() and start_time(int(parts[0])) != parts[1]


def remove_dead_cgroups(parents, prefix: str) -> list[str]:
    """rmdir the empty run cgroups of launchers that are gone (a cgroup in use cannot be removed)."""
    removed = []
    for parent in parents:
        for entry in os.scandir(parent):
            if entry.is_dir(follow_symlinks=False) and owner_is_gone(entry.name, prefix):
                try:
                    os.rmdir(entry.path)
                    removed.append(entry.path)
                except OSError:  # still holds processes, or not ours to remove
                    pass
    return removed


def remove_dead_stages(tmp: str | None = None) -> list[str]:
    """Remove root-owned staging directories whose owning process is gone."""
    removed = []
    for entry in os.scandir(tmp or tempfile.gettempdir()):
        if not owner_is_gone(entry.name, STAGE_PREFIX):  # gone, or its pid reused
            continue
        if entry.is_dir(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_uid == 0:
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(entry.path)
    return removed
