"""Shared fixtures: a sandbox with small limits, the cgroup mechanism, and the skip-or-fail rule.

Where the sandbox cannot be built, tests skip with the reason, except under CI
(``CI=true``), where that is a failure: CI must exercise the real sandbox.
"""

from __future__ import annotations

import pytest
from sandbox_helpers import TEST_LIMITS, require_cgroup, require_sandbox

from fpa.sandbox import Sandbox, sandbox_problem


@pytest.fixture(scope="session")
def sandbox() -> Sandbox:
    require_sandbox(sandbox_problem())
    return Sandbox(TEST_LIMITS)


@pytest.fixture
def cgroup_name() -> str:
    """The cgroup mechanism that works here (skip, or fail under CI, where none does)."""
    return require_cgroup()
