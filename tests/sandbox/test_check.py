"""The start-up check and the CI rule: a missing sandbox skips locally, fails under CI."""

from __future__ import annotations

import pytest
import sandbox_helpers
from sandbox_helpers import require_sandbox

from fpa.sandbox import SandboxUnavailable, check, check_sandbox, sandbox_problem


def test_check_passes_here_or_explains(sandbox):
    assert sandbox_problem() is None
    check_sandbox()


def test_missing_bwrap_is_one_line_with_the_fix(monkeypatch):
    sandbox_problem.cache_clear()
    monkeypatch.setattr(check.shutil, "which", lambda tool: None if tool == "bwrap" else f"/usr/bin/{tool}")
    try:
        with pytest.raises(SandboxUnavailable) as info:
            check_sandbox()
    finally:
        sandbox_problem.cache_clear()
    message = str(info.value)
    assert "\n" not in message and "apt-get install -y bubblewrap" in message


def test_userns_hint_names_the_sysctl(monkeypatch):
    values = {"/proc/sys/kernel/unprivileged_userns_clone": None, "/proc/sys/user/max_user_namespaces": "0"}
    monkeypatch.setattr(check, "_read_sysctl", lambda path: values.get(path))
    assert "sysctl -w user.max_user_namespaces=" in check.userns_hint("bwrap: No permissions to create new namespace")


def test_missing_sandbox_skips_outside_ci(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="bubblewrap is not installed"):
        require_sandbox("bubblewrap is not installed")


def test_missing_sandbox_fails_under_ci(monkeypatch):
    monkeypatch.setenv("CI", "true")
    assert sandbox_helpers.in_ci()
    with pytest.raises(pytest.fail.Exception, match="sandbox unavailable under CI"):
        require_sandbox("bubblewrap is not installed")
