"""Sandbox for model-generated code: bubblewrap + setpriv + rlimits + a per-run cgroup
(or watchdog) bounding the run's total memory and processes + a wall clock.

    from fpa.sandbox import Limits, Sandbox, run_python
    result = Sandbox(Limits(timeout_s=5)).run_python("print(input())", stdin="hi\n")
    result.stdout, result.returncode, result.timed_out, result.memory_exceeded

See docs/sandbox.md for what is isolated and how.
"""

from __future__ import annotations

import functools
from typing import Mapping

from fpa.sandbox.bound import memory_bound
from fpa.sandbox.check import SandboxUnavailable
from fpa.sandbox.limits import InputTooLarge, Limits, RunResult
from fpa.sandbox.runner import Sandbox, check_sandbox, sandbox_problem

__all__ = ["InputTooLarge", "Limits", "RunResult", "Sandbox", "SandboxUnavailable", "check_sandbox", "memory_bound", "run_python",
           "sandbox_problem"]


@functools.lru_cache(maxsize=1)
def default_sandbox() -> Sandbox:
    """One sandbox with default limits per process (checked on first use)."""
    return Sandbox()


def run_python(
    source: str,
    input: str | bytes | None = None,
    timeout: float | None = None,
    *,
    files: Mapping[str, str | bytes] | None = None,
    sandbox: Sandbox | None = None,
) -> RunResult:
    """Run ``source`` as a script in the (default) sandbox; what the code graders call."""
    return (sandbox or default_sandbox()).run_python(source, stdin=input, files=files, timeout_s=timeout)
