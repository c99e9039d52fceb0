"""What a sandboxed run may use (``Limits``) and what it returns (``RunResult``)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

MiB = 1 << 20
GiB = 1 << 30


@dataclass(frozen=True)
class Limits:
    """Per-run resource limits. The kernel enforces every field, except that
    ``total_memory_bytes`` falls back to a polling watchdog where no cgroup is writable
    (``fpa.sandbox.bound``; docs/sandbox.md says what each mechanism guarantees)."""

    timeout_s: float = 10.0  # wall clock; the whole sandbox is SIGKILLed when it runs out
    cpu_s: int = 10  # RLIMIT_CPU (seconds of CPU, per process)
    memory_bytes: int = 4 * GiB  # RLIMIT_AS (virtual address space, per process)
    nproc: int = 64  # RLIMIT_NPROC (processes and threads; the uid is unique to the run)
    fsize_bytes: int = 64 * MiB  # RLIMIT_FSIZE (largest file the program may write)
    nofile: int = 256  # RLIMIT_NOFILE
    tmpfs_bytes: int = 64 * MiB  # size of each writable tmpfs: /sandbox and /tmp (= /dev/shm)
    output_bytes: int = 1 * MiB  # stdout and stderr each keep at most this many bytes
    total_memory_bytes: int = 4 * GiB  # memory of all the run's processes together (cgroup or watchdog)

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
                raise ValueError(f"Limits.{field.name}: expected a finite number > 0, got {value!r}")
            if field.name != "timeout_s" and not isinstance(value, int):
                raise ValueError(f"Limits.{field.name}: expected an integer, got {value!r}")


class InputTooLarge(ValueError):
    """The files given to a run do not fit its file-size limit or its share of the tmpfs. Raised
    before anything starts, so a grader can give that one record a verdict and go on."""


@dataclass(frozen=True)
class RunResult:
    """Outcome of one run.

    ``returncode`` follows ``subprocess``: ``-N`` when the program died from signal N.
    Under bubblewrap a program that exits with 128+N is indistinguishable from one
    killed by signal N, and is reported as killed (either way it failed).
    """

    returncode: int
    stdout: str
    stderr: str
    timed_out: bool
    killed_by_signal: int | None
    wall_s: float
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    memory_exceeded: bool = False  # the run's processes together went over ``total_memory_bytes``
    memory_peak_bytes: int | None = None  # the run's peak total, as its cgroup or watchdog measured it

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and not self.memory_exceeded

    def failure(self, otherwise: str) -> str:
        """Why a run gave no usable output: ``timeout``, ``memory_exceeded`` (its processes together
        over ``total_memory_bytes``), else ``otherwise`` (the grader's name for a failed program)."""
        if self.timed_out:
            return "timeout"
        return "memory_exceeded" if self.memory_exceeded else otherwise
