"""Shared fixtures: a sandbox with small limits, and the skip-or-fail rule.

Where the sandbox cannot be built, tests skip with the reason, except under CI
(``CI=true``), where that is a failure: CI must exercise the real sandbox.
"""

from __future__ import annotations

import pytest
from sandbox_helpers import TEST_LIMITS, require_sandbox

from fpa.sandbox import Sandbox, sandbox_problem


@pytest.fixture(scope="session")
def sandbox() -> Sandbox:
    require_sandbox(sandbox_problem())
    return Sandbox(TEST_LIMITS)
