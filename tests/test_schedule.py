"""tests/schedule.py: slow tests first, the tests of an ``xdist_group`` on one xdist worker, and a
test marked alone run while no other test runs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

TESTS = """
import pytest

@pytest.fixture(scope="module")
def built_once():
    return object()

def test_plain_first(built_once):
    pass

def test_plain_second(built_once):
    pass

@pytest.mark.cpu_budget(5)
def test_own_budget():
    pass

@pytest.mark.slow
@pytest.mark.xdist_group("built_once")
def test_shares_one(built_once):
    pass

@pytest.mark.slow
@pytest.mark.xdist_group("built_once")
def test_shares_two(built_once):
    pass

@pytest.mark.slow
def test_slow():
    pass

@pytest.mark.xdist_group("six")
@pytest.mark.parametrize("index", range(6))
def test_marked(index):
    pass
"""

TIMED = """
import json, os, time
import pytest

def window(name, seconds):
    start = time.monotonic()
    time.sleep(seconds)
    with open(os.environ["WINDOWS"], "a") as handle:
        handle.write(json.dumps([name, start, time.monotonic()]) + "\\n")

@pytest.mark.parametrize("index", range(6))
def test_busy(index):
    window(f"busy{index}", 0.3)

@pytest.mark.alone
def test_alone():
    window("alone", 0.3)
"""


@pytest.fixture
def scheduled(pytester, monkeypatch):
    pytester.makeini("[pytest]\nmarkers =\n    slow: end-to-end runs\n    cpu_budget(seconds): own budget\n")
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent))  # xdist's workers import schedule from here
    return pytester


def test_slow_tests_run_first_then_those_with_a_budget_of_their_own(scheduled):
    scheduled.makepyfile(test_mix=TESTS)
    result = scheduled.runpytest("-p", "schedule", "--collect-only", "-q")
    assert [line.split("::")[1] for line in result.stdout.lines if "::" in line] == [
        "test_shares_one", "test_shares_two", "test_slow", "test_own_budget", "test_plain_first",
        "test_plain_second", *(f"test_marked[{index}]" for index in range(6))]


def test_the_tests_of_an_xdist_group_run_on_one_worker_and_the_others_spread(scheduled):
    """pytest-xdist 3.8.0 under pytest 9.2 groups none of them by itself (pytest-xdist#1386)."""
    pytest.importorskip("xdist")
    scheduled.makepyfile(test_mix=TESTS)
    result = scheduled.runpytest_subprocess("-p", "schedule", "-n", "2", "--dist", "loadgroup", "-v")
    result.assert_outcomes(passed=12)
    workers = dict((test, worker) for worker, test in
                   re.findall(r"\[(gw\d)\] .*PASSED test_mix\.py::(\S+)", result.stdout.str()))
    assert len(workers) == 12, result.stdout.str()
    assert workers["test_shares_one"] == workers["test_shares_two"], workers
    assert len({workers[f"test_marked[{index}]"] for index in range(6)}) == 1, workers
    assert set(workers.values()) == {"gw0", "gw1"}, workers


def test_a_test_marked_alone_runs_while_no_other_test_does(scheduled, monkeypatch):
    pytest.importorskip("xdist")
    scheduled.makepyfile(test_timed=TIMED)
    windows = scheduled.path / "windows.jsonl"
    monkeypatch.setenv("WINDOWS", str(windows))
    result = scheduled.runpytest_subprocess("-p", "schedule", "-n", "2")
    result.assert_outcomes(passed=7)
    spans = {name: (start, end) for name, start, end in map(json.loads, windows.read_text().splitlines())}
    alone = spans.pop("alone")
    assert all(end <= alone[0] or start >= alone[1] for start, end in spans.values()), (alone, spans)
    assert any(start < other_end and other_start < end for start, end in spans.values()  # the others overlap
               for other_start, other_end in spans.values() if (start, end) != (other_start, other_end))
