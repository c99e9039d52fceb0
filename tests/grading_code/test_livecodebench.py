"""LiveCodeBench: the fixture (stdin and functional, JSON and compressed-pickle private tests)."""

from __future__ import annotations

import base64
import dataclasses
import json
import pickle
import zlib
from pathlib import Path

import pytest

from fpa.grading.code import grade_code_many, livecodebench
from fpa.sandbox import Sandbox

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "lcb" / "test6_fixture.jsonl"
RIGHT = {
    "fx_stdin_sum": "a, b = map(int, input().split())\nprint(a + b)\n",
    "fx_stdin_float": "n = int(input())\nfor _ in range(n):\n    print(int(input()) / 2)\n",
    "fx_func_twosum": "```python\nclass Solution:\n    def twoSum(self, nums: List[int], target: int) -> List[int]:\n"
    "        seen = {}\n        for i, x in enumerate(nums):\n            if target - x in seen:\n"
    "                return (seen[target - x], i)\n            seen[x] = i\n```\n",
    "fx_func_vowels": "class Solution:\n    def countVowels(self, s: str) -> int:\n"
    "        return sum(c in 'aeiouAEIOU' for c in s)\n",
}
WRONG = {
    "fx_stdin_sum": "a, b = map(int, input().split())\nprint(a - b)\n",
    "fx_stdin_float": "raise ValueError(3)\n",  # a SystemExit is caught, as LiveCodeBench catches it
    "fx_func_twosum": "class Solution:\n    def twoSum(self, *a, **k):\n        return None\n",
    "fx_func_vowels": "class Solution:\n    def countVowels(self, s):\n        while True: pass\n",
}


@pytest.fixture(scope="module")
def sandbox():
    return Sandbox(dataclasses.replace(livecodebench.LIMITS, timeout_s=2.0))  # LCB: 6 s; 2 s keeps the timeout case short


def test_private_tests_decoded_in_sandbox(sandbox):
    problems = livecodebench.load_tasks(FIXTURE)
    tests = livecodebench.all_tests(problems["fx_func_twosum"], sandbox)
    assert [t["output"] for t in tests] == ["[0, 1]", "[1, 2]", "[0, 1]"]
    assert {t["testtype"] for t in tests} == {"functional"}


def test_hostile_pickle_refused(sandbox):
    hostile = base64.b64encode(zlib.compress(pickle.dumps(Path("/etc/passwd")))).decode()
    with pytest.raises(ValueError, match="refused"):
        livecodebench.decode_tests(hostile, sandbox)


def test_right_pass_wrong_fail(sandbox):
    ids = list(RIGHT)
    pairs = [(RIGHT[i], i) for i in ids] + [(WRONG[i], i) for i in ids]
    verdicts = grade_code_many("livecodebench", pairs, data_path=FIXTURE, workers=2, sandbox=sandbox)
    assert verdicts[:4] == [(True, "lcb_pass")] * 4
    rules = [rule for _, rule in verdicts[4:]]
    assert rules == ["lcb_wrong_answer", "lcb_runtime_error", "lcb_wrong_answer", "lcb_timeout"]


def test_stdout_comparison():
    assert livecodebench.stdout_matches("1.50\n2\n", "1.5\n2")
    assert not livecodebench.stdout_matches("1\n", "1\n2\n")
    assert not livecodebench.stdout_matches("abc", "abd")


def test_an_oversized_problem_costs_that_record_only(tmp_path):
    """Tests over the sandbox's tmpfs share go in on stdin and are graded; a program too large for
    its files is that record's verdict, and the rest of the batch is graded."""
    tiny = Sandbox(dataclasses.replace(livecodebench.LIMITS, timeout_s=5.0, tmpfs_bytes=1 << 20, fsize_bytes=1 << 20))
    word = "a" * (tiny.limits.tmpfs_bytes + 1)
    big = {**livecodebench.load_tasks(FIXTURE)["fx_func_vowels"], "question_id": "fx_big", "private_test_cases": "[]",
           "public_test_cases": json.dumps([{"input": json.dumps(word), "output": str(len(word)), "testtype": "functional"}])}
    data = tmp_path / "test6.jsonl"
    data.write_text(FIXTURE.read_text() + json.dumps(big) + "\n")
    oversized_program = RIGHT["fx_stdin_sum"] + "#" * tiny.limits.tmpfs_bytes
    pairs = [(RIGHT["fx_func_vowels"], "fx_big"), (oversized_program, "fx_stdin_sum"), (RIGHT["fx_stdin_sum"], "fx_stdin_sum")]
    verdicts = grade_code_many("livecodebench", pairs, data_path=data, workers=2, sandbox=tiny)
    assert verdicts == [(True, "lcb_pass"), (False, "lcb_too_large"), (True, "lcb_pass")]
