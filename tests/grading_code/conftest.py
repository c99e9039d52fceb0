"""Mirror and sandbox for the code graders: skip with the reason, but fail under CI=true."""

from __future__ import annotations

import pytest

from code_helpers import skip_or_fail

from fpa.grading.code import default_mirror
from fpa.sandbox import sandbox_problem


@pytest.fixture(scope="session", autouse=True)
def _sandbox_available():
    problem = sandbox_problem()
    if problem:
        skip_or_fail(f"sandbox unavailable: {problem}")


@pytest.fixture(scope="session")
def mirror():
    path = default_mirror()
    if not (path / "tiny").is_dir():
        skip_or_fail(f"data mirror not found at {path} (set FPA_DATA_MIRROR)")
    return path
