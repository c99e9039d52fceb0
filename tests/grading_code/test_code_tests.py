"""The code training reward (``code_tests``) on TACO/APPS fixture problems, and the offline
dataset built with it (K samples, all-agree problems dropped), in the sandbox."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from fpa.grading.code.tests import build_code_train
from fpa.grading import code_graders, get_grader
from fpa.grading.code import livecodebench
from fpa.grading.code.tests import grade_tests_many
from fpa.samples.offline import build_offline_dataset, grade_samples
from fpa.sandbox import Sandbox

MIRROR = Path(__file__).resolve().parents[1] / "fixtures" / "code" / "mirror"
RIGHT = {
    "taco_train/0": "```python\nprint(2 * int(input()))\n```",
    "taco_train/1": "def add(a, b):\n    return a + b\n",  # top-level function; expected outputs are [3], [7]
    "taco_train/2": "class Solution:\n    def maxOf(self, nums: List[int]) -> int:\n        return max(nums)\n",
    "taco_train/4": "input()\nprint(sum(map(int, input().split())))\n",
    "apps_train/1": "print(input()[::-1])\n",
}
WRONG = {
    "taco_train/0": "print(int(input()) + 2)\n",
    "taco_train/1": "def add(a, b):\n    return a - b\n",
    "taco_train/2": "class Solution:\n    def maxOf(self, nums):\n        return min(nums)\n",
    "taco_train/4": "raise ValueError(1)\n",  # a SystemExit is caught, as LiveCodeBench catches it: no output
    "apps_train/1": "while True:\n    pass\n",
}

# Wrong for each problem here (for taco_train/1 it defines no ``add``:
# test_a_function_the_program_does_not_define_fails).
NO_ANSWER = "print('no')\n"


@pytest.fixture(scope="module")
def problems():
    loaded, _ = build_code_train({"taco_train": MIRROR / "taco" / "train.jsonl",
                                  "apps_train": MIRROR / "apps" / "train.jsonl"})
    return {problem.id: problem for problem in loaded}


@pytest.fixture(scope="module")
def sandbox():
    return Sandbox(dataclasses.replace(livecodebench.LIMITS, timeout_s=2.0))  # 2 s keeps the timeout case short


def test_registered_as_code_graders():
    assert {"livecodebench", "code_tests"} <= set(code_graders())
    assert get_grader("code_tests") is grade_tests_many


def test_right_programs_pass_wrong_fail(problems, sandbox):
    ids = list(RIGHT)
    pairs = [(RIGHT[i], problems[i].answer) for i in ids] + [(WRONG[i], problems[i].answer) for i in ids]
    verdicts = grade_tests_many(pairs, workers=2, sandbox=sandbox)
    assert verdicts[:5] == [(True, "lcb_pass")] * 5, verdicts[:5]
    assert [rule for _, rule in verdicts[5:]] == ["lcb_wrong_answer", "lcb_wrong_answer", "lcb_wrong_answer",
                                                  "lcb_runtime_error", "lcb_timeout"]


def test_a_function_the_program_does_not_define_fails(problems, sandbox):
    """LCB looks ``func_name`` up in the program's module, which its import header has filled:
    ``from operator import *`` binds ``add``, so there a program that defines nothing returns operator.add's
    3 and 7, which APPS's one-element-list rule accepts for [3] and [7]: a +1 reward for ``print('no')``.
    ``code_tests`` requires the program to define ``func_name`` (a top-level def or a method of
    ``class Solution``): a kept difference (docs/code_eval.md)."""
    undefined = ["print('no')\n", "from operator import add\n",
                 "class Solution:\n    pass\n\ndef helper(a, b):\n    return a + b\n"]
    verdicts = grade_tests_many([(code, problems["taco_train/1"].answer) for code in undefined], workers=1,
                                sandbox=sandbox)
    assert verdicts == [(False, "code_tests_undefined_function: add")] * 3, verdicts
    method = "class Solution:\n    def add(self, a, b):\n        return a + b\n"
    assert grade_tests_many([(method, problems["taco_train/1"].answer)], workers=1, sandbox=sandbox) == [
        (True, "lcb_pass")]


def test_a_malformed_spec_costs_its_record_only(sandbox):
    """A record the grader cannot read is ``grader_error: ...``; the records beside it are graded."""
    right = (RIGHT["apps_train/1"], json.dumps({"testtype": "stdin", "tests": [{"input": "ab", "output": "ba"}]}))
    pairs = [("print(1)", "Mbpp/2"), ("print(1)", json.dumps({"testtype": "stdin", "tests": []})), right,
             ("print(1)", json.dumps({"testtype": "functional", "func_name": None, "tests": [{"input": "1", "output": "1"}]}))]
    verdicts = grade_tests_many(pairs, sandbox=sandbox, workers=2)
    assert verdicts[2] == (True, "lcb_pass")
    assert [rule.split(":")[0] for _, rule in verdicts[:2] + verdicts[3:]] == ["grader_error"] * 3
    assert "gold is not a JSON test spec" in verdicts[0][1] and "func_name" in verdicts[3][1]


def test_offline_dataset_with_the_code_reward(problems, sandbox):
    """K=4 per problem: mixed groups are kept, an all-wrong group is dropped (the math construction)."""
    samples = []
    for pid in ("taco_train/0", "taco_train/1", "apps_train/1"):
        for index in range(4):
            mixed = pid != "apps_train/1"
            completion = RIGHT[pid] if mixed and index % 2 == 0 else NO_ANSWER
            samples.append({"id": f"{pid}/{index}", "problem_id": pid, "sample_index": index, "prompt": "p",
                            "completion": completion, "answer": problems[pid].answer})
    graded = grade_samples(samples, lambda pairs: grade_tests_many(pairs, workers=2, sandbox=sandbox))
    assert [s["reward"] for s in graded[:4]] == [1.0, -1.0, 1.0, -1.0]
    built = build_offline_dataset(graded, k=4, validation_fraction=0.5, seed=42)
    assert built.summary["dropped_all_incorrect"] == 1 and built.summary["dropped_all_correct"] == 0
    assert {s["problem_id"] for s in built.train + built.val} == {"taco_train/0", "taco_train/1"}


def test_unsandboxed_mode_is_an_explicit_opt_in(monkeypatch):
    from fpa.grading.code import SANDBOX_ENV, sandbox_mode

    monkeypatch.delenv(SANDBOX_ENV, raising=False)
    assert sandbox_mode() == "bwrap"
    monkeypatch.setenv(SANDBOX_ENV, "none")
    assert sandbox_mode() == "none"
    monkeypatch.setenv(SANDBOX_ENV, "off")
    with pytest.raises(ValueError, match="FPA_SANDBOX: expected 'bwrap' or 'none', got 'off'"):
        sandbox_mode()
