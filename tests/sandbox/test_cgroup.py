"""The per-run cgroups themselves: pids.max alone, clean-up, and v2 delegation (real kernel cgroups)."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from sandbox_helpers import FORK_BOMB, TEST_LIMITS, in_ci, require_sandbox

from fpa.sandbox import Sandbox, bound, cgroup, janitor, sandbox_problem


def test_cgroup_pids_max_alone_bounds_a_fork_bomb(cgroup_name):
    """Without prlimit or bwrap: only the run's cgroup stops the forks."""
    run = bound.choose(cgroup_name).start(dataclasses.replace(TEST_LIMITS, nproc=12))
    try:
        argv = [*run.prefix, sys.executable, "-c", FORK_BOMB, "fpa-bomb", "12"]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    finally:
        run.kill()
        time.sleep(0.1)
        run.close()
    count, reason = done.stdout.split(" ", 1)
    assert int(count) == 12 - 1 and reason.strip() == "Resource temporarily unavailable"
    assert not any(os.path.exists(directory) for directory in run.dirs.values())


def test_no_cgroup_is_left_behind(cgroup_name):
    require_sandbox(sandbox_problem())
    parents = set(bound.choose(cgroup_name).parents.values())
    Sandbox(TEST_LIMITS, aggregate=cgroup_name).run_python("print(1)")
    mine = f"{cgroup.PREFIX}{os.getpid()}-"
    assert [name for parent in parents for name in os.listdir(parent) if name.startswith(mine)] == []


def test_cgroups_of_dead_launchers_are_removed(cgroup_name):
    parents = set(bound.choose(cgroup_name).parents.values())
    dead = [os.path.join(parent, f"{cgroup.PREFIX}999999999-123-0") for parent in parents]
    for directory in dead:
        os.mkdir(directory)
    try:
        assert sorted(janitor.remove_dead_cgroups(parents, cgroup.PREFIX)) == sorted(dead)
    finally:
        for directory in dead:
            if os.path.exists(directory):
                os.rmdir(directory)


def v2_domain_controller() -> tuple[str, str]:
    """(cgroup2 mount point, a domain controller it offers): the v2 rules hold for any of them."""
    mount = cgroup._cgroup_mounts().get("cgroup2")
    offered = set(Path(mount[0], "cgroup.controllers").read_text().split()) if mount else set()
    name = next((c for c in ("memory", "pids", "io", "hugetlb") if c in offered), None)
    if mount is None or name is None or not os.access(mount[0], os.W_OK):
        problem = f"no writable cgroup2 hierarchy with a domain controller (mount: {mount}, offered: {offered})"
        pytest.fail(f"{problem} under CI", pytrace=False) if in_ci() else pytest.skip(problem)
    return mount[0], name


def test_a_delegated_v2_cgroup_holding_processes_moves_them_to_a_leaf():
    """SLURM's task cgroup holds the launcher, and v2 refuses controllers to the children of a
    cgroup with processes (EBUSY): they move into ``fpa-launcher`` first. Shown with whatever
    domain controller this host's cgroup2 offers (here memory may be bound to v1)."""
    root, controller = v2_domain_controller()
    root_control = Path(root, "cgroup.subtree_control")
    enabled_at_root = controller in root_control.read_text().split()
    task = Path(root, f"fpa-test-task-{uuid.uuid4().hex[:8]}")
    if not enabled_at_root:
        root_control.write_text(f"+{controller}")  # the root may hold processes
    task.mkdir()
    holder = subprocess.Popen(["sh", "-c", 'echo $$ > "$1" && exec sleep 30', "holder", str(task / "cgroup.procs")])
    try:
        deadline = time.monotonic() + 5
        while str(holder.pid) not in (task / "cgroup.procs").read_text().split() and time.monotonic() < deadline:
            time.sleep(0.01)
        with pytest.raises(OSError):  # what the move is for
            (task / "cgroup.subtree_control").write_text(f"+{controller}")
        cgroup.enable_v2_controllers(str(task), (controller,))
        leaf = task / cgroup.LAUNCHER_LEAF
        assert (task / "cgroup.procs").read_text().split() == []
        assert (leaf / "cgroup.procs").read_text().split() == [str(holder.pid)]
        assert controller in (task / "cgroup.subtree_control").read_text().split()
        (task / "run").mkdir()  # a run's cgroup now gets the controller
        assert controller in (task / "run" / "cgroup.controllers").read_text().split()
    finally:
        holder.kill()
        holder.wait()
        for directory in (task / "run", task / cgroup.LAUNCHER_LEAF, task):
            _rmdir_when_empty(directory)
        if not enabled_at_root:
            root_control.write_text(f"-{controller}")


def _rmdir_when_empty(directory: Path) -> None:
    deadline = time.monotonic() + 2
    while directory.exists():
        try:
            directory.rmdir()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.01)
