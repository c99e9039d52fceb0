"""A sandbox for the code graders' tests that run only programs written in the test files."""

from __future__ import annotations

import os
import warnings

import pytest

from fpa.grading.code import livecodebench
from fpa.sandbox import Sandbox, sandbox_problem


@pytest.fixture(scope="module")
def own_programs_sandbox():
    """LiveCodeBench's limits in bubblewrap; unsandboxed only off CI where bubblewrap cannot run, which is
    safe because every program it runs is written in the test file."""
    if sandbox_problem() and os.environ.get("CI") != "true":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # UNSANDBOXED: on purpose, see above
            return Sandbox(livecodebench.LIMITS, mode="none")
    return Sandbox(livecodebench.LIMITS)
