"""BigCodeBench: canonical solutions of the tiny file, a wrong solution, and the loud environment check."""

from __future__ import annotations

import dataclasses

import pytest
from code_helpers import TINY

from fpa.grading.code import bigcodebench

# CPU-heavy (all 3.6M permutations of 1..10, per test): minutes on a loaded 2-core runner; not run here.
SLOW = {"BigCodeBench/0"}
# Canonical solutions that fail here for environment reasons (documented in docs/code_eval.md).
EXPECTED_FAILURES = {
    "BigCodeBench/9": "imports seaborn, which the eval environment here lacks (ModuleNotFoundError)",
}


def test_environment_check_fails_loudly():
    from fpa.sandbox import Limits, Sandbox

    with pytest.raises(RuntimeError, match="must import"):
        bigcodebench.check_environment(Sandbox(Limits(timeout_s=10)), modules=("fpa_no_such_module",))


@pytest.fixture(scope="module")
def sandbox():
    pytest.importorskip("bigcodebench", reason="bigcodebench not installed (pip install --no-deps bigcodebench==0.2.5)")
    pytest.importorskip("matplotlib", reason="matplotlib not installed (BigCodeBench needs it)")
    from fpa.sandbox import Sandbox

    sandbox = Sandbox(dataclasses.replace(bigcodebench.LIMITS, timeout_s=60.0, cpu_s=60))
    bigcodebench.check_environment(sandbox)  # what make_sandbox("bigcodebench") runs: imports + canary
    return sandbox


@pytest.mark.slow  # 20 tasks' tests, each in a sandbox of its own with BigCodeBench's libraries
def test_gold_and_wrong(mirror, sandbox):
    from fpa.grading.code import gold_program, grade_code_many

    tasks = {k: v for k, v in bigcodebench.load_tasks(mirror / TINY["bigcodebench"]).items() if k not in SLOW}
    pairs = [(gold_program("bigcodebench", task), task_id) for task_id, task in tasks.items()]
    pairs += [("    return None\n", task_id) for task_id in ("BigCodeBench/1",)]
    # six sandboxes at a time on 2 cores: a task's time is mostly its libraries' imports and, for
    # BigCodeBench/17, sleeping (its solution waits 5 s after each of its restarts)
    verdicts = grade_code_many("bigcodebench", pairs, tasks=tasks, workers=6, sandbox=sandbox)
    gold, wrong = verdicts[: len(tasks)], verdicts[len(tasks):]
    failed = {task_id: rule for (_, task_id), (ok, rule) in zip(pairs, gold) if not ok}
    print(f"BigCodeBench tiny gold: {len(tasks) - len(failed)}/{len(tasks)}; failed: {failed}")
    assert set(failed) <= set(EXPECTED_FAILURES), failed
    assert not any(ok for ok, _ in wrong), wrong


def test_the_verdict_needs_every_declared_test_reported_passing():
    """``outcome`` on report lines as the child sends them, and as a program could forge them."""
    declared = bigcodebench.declared_tests(bigcodebench.CANARY["test"] + "    def test_more(self):\n        pass\n")
    assert declared == {"test_plot", "test_more"}
    passed = ['["pass", "__test__.TestCases.test_more", ""]', '["pass", "__test__.TestCases.test_plot", ""]']
    done = '["done", true, [], ""]'

    def status(lines, end="exited"):
        return bigcodebench.outcome(end, lines, declared)["status"]

    assert status(passed + [done]) == "pass"
    assert status(passed[1:] + [done]) == "incomplete"  # test_more never reported passing
    assert status(['["skip", "__test__.TestCases.test_more", "skipped"]', passed[1], done]) == "incomplete"
    assert status(passed) == "incomplete"  # the tests never reported their end
    assert status(['["fail", "__test__.TestCases.test_more", "boom"]'] + passed + [done]) == "fail"
    assert status(passed + ['["done", false, [], "ALL"]']) == "fail"  # BigCodeBench's own verdict
    assert status(['["tampered", "x", "TestCase.run"]'] + passed + [done]) == "tampered"
    assert status(passed + ['["done", true, ["builtins.isinstance"], ""]']) == "tampered"
    for forged in ('{"done": 1}', '["done", true, 5, ""]', "[1]", "not json"):
        assert status(passed + [forged]) == "incomplete", forged
    assert status(passed + [done], end="timeout") == "timeout"
