"""The fast tier's guard (tests/fast_tier.py) fails a test not marked slow that spends more CPU
than its budget, and lets a slow test or one with its own larger budget spend it."""

from __future__ import annotations

from pathlib import Path

import pytest

BURNER = """
import time
from pathlib import Path

import pytest

def burn(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass

def test_over_budget():
    burn(0.3)

@pytest.mark.slow
def test_slow_over_budget():
    burn(0.3)

@pytest.mark.cpu_budget(5)
def test_own_budget():
    burn(0.3)

def test_within_budget():
    pass
"""


@pytest.fixture
def guarded(pytester):
    pytester.makeini("[pytest]\nfast_tier_cpu_seconds = 0.2\nmarkers = slow: end-to-end runs\n")
    pytester.makepyfile(test_burner=BURNER)
    return pytester


def test_a_test_over_its_cpu_budget_fails_and_names_the_way_out(guarded):
    result = guarded.runpytest("-p", "fast_tier")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*test_over_budget spent * CPU s, over the fast tier's 0.2 *mark it slow*",
                                 "*3 tests not marked slow: * CPU s; the costliest:*"])


def test_the_fast_tier_command_runs_only_unmarked_tests_under_the_guard(guarded):
    result = guarded.runpytest("-p", "fast_tier", "-m", "not slow")
    result.assert_outcomes(passed=2, failed=1, deselected=1)


def test_the_summary_counts_the_tests_of_every_xdist_worker(guarded, monkeypatch):
    pytest.importorskip("xdist")
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent))  # the workers import fast_tier from here
    result = guarded.runpytest_subprocess("-p", "fast_tier", "-n", "2")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*3 tests not marked slow: * CPU s; the costliest:*",
                                 "*CPU s  test_burner.py::test_over_budget"])
