"""Helpers for the sandbox tests (importable, unlike conftest): limits, skip-or-fail, /proc scan,
the cgroup mechanism that works here, a fork bomb, a meter sampling outside the sandbox."""

from __future__ import annotations

import os
import threading

import pytest

from fpa.sandbox import Limits, bound
from fpa.sandbox.limits import MiB

TEST_LIMITS = Limits(
    timeout_s=5,
    cpu_s=5,
    memory_bytes=1024 * MiB,
    nproc=32,
    fsize_bytes=8 * MiB,
    tmpfs_bytes=16 * MiB,
    output_bytes=64 * 1024,
)


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def require_sandbox(problem: str | None) -> None:
    """Skip (locally) or fail (CI) when ``problem`` says the sandbox is unavailable."""
    if problem is None:
        return
    if in_ci():
        pytest.fail(f"sandbox unavailable under CI: {problem}", pytrace=False)
    pytest.skip(f"sandbox unavailable: {problem}")


def host_pids_with(marker: str) -> list[int]:
    """Host processes whose command line contains ``marker``."""
    pids = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                with open(f"/proc/{entry.name}/cmdline", "rb") as handle:
                    if marker.encode() in handle.read():
                        pids.append(int(entry.name))
            except OSError:
                pass
    return pids


class Meter:
    """Samples in a thread of its own while its ``with`` block runs: ``sample`` (a subclass's)
    every ``interval_s``, keeping whatever peaks the subclass keeps."""

    interval_s = 0.0

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.sample()

    def sample(self) -> None:
        raise NotImplementedError


def cgroup_mechanism() -> str | None:
    """The first cgroup version that works here (None: no cgroup is writable)."""
    return next((name for name in ("cgroup2", "cgroup1") if not isinstance(bound.probe(name), str)), None)


def require_cgroup() -> str:
    """The cgroup mechanism; where none is writable, skip locally and fail under CI (CI runs as root)."""
    name = cgroup_mechanism()
    if name is None:
        reasons = "; ".join(f"{n}: {bound.probe(n)}" for n in ("cgroup2", "cgroup1"))
        if in_ci():
            pytest.fail(f"no writable cgroup under CI: {reasons}", pytrace=False)
        pytest.skip(f"no writable cgroup here: {reasons}")
    return name


# Forks children that sleep until a fork fails, then prints "N strerror"; argv: marker, ceiling / 4.
FORK_BOMB = """
import os, sys, time
n = 0
while n < 4 * int(sys.argv[2]):  # a ceiling, should the bound under test be broken
    try:
        if os.fork() == 0:
            os.close(1), os.close(2)  # a caller reading our output to its end does not wait for them
            time.sleep(60)
            os._exit(0)
        n += 1
    except OSError as err:
        print(n, err.strerror, flush=True)
        time.sleep(0.5)  # let the meter see them all
        break
else:
    print(n, "no limit hit", flush=True)
"""
