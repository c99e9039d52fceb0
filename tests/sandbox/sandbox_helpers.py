"""Helpers for the sandbox tests (importable, unlike conftest): limits, skip-or-fail, /proc scan."""

from __future__ import annotations

import os

import pytest

from fpa.sandbox import Limits
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
