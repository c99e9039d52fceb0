"""The grading benchmarks' own plumbing: the sandbox mode is ``fpa.grading.code.sandbox_mode()``'s, and a run
that fails leaves no work directory behind."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from grading import code_rounds, differential  # noqa: E402


def test_the_sandbox_mode_is_the_packages(monkeypatch):
    """An FPA_SANDBOX the package refuses is refused here too (before: taken as the mode, unchecked)."""
    monkeypatch.setenv("FPA_SANDBOX", "bogus")
    with pytest.raises(ValueError, match="FPA_SANDBOX"):
        differential.parse_args(["--against", "HEAD"])
    with pytest.raises(ValueError, match="FPA_SANDBOX"):
        code_rounds.run(code_rounds.parse_args(["--against", "HEAD", "--bench", "mbppplus", "--tasks", "1"]))


def test_a_failed_run_leaves_no_work_directory(monkeypatch, tmp_path):
    def fail(directory, count):
        raise RuntimeError("no LiveCodeBench file")

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(code_rounds, "lcb_tasks", fail)
    with pytest.raises(RuntimeError, match="no LiveCodeBench file"):
        code_rounds.run(code_rounds.parse_args(["--against", "HEAD", "--bench", "livecodebench"]))
    assert list(tmp_path.iterdir()) == []
