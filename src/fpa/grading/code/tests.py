"""The code training reward (TACO, APPS): run a sample against its problem's own tests.

Grader ``code_tests`` over ``(completion, tests)`` pairs, where ``tests`` is the JSON spec
``fpa.data.code.make_test_spec`` builds from a row's ``input_output``::

    {"testtype": "stdin" | "functional", "func_name": str | null,
     "tests": [{"input": str, "output": str}, ...]}

It reuses LiveCodeBench's checker in the same sandbox (``livecodebench.grade_one``, with
its limits: 6 s per test, the import header, first failure stops) in ``style="apps"``:
a call-based problem may define a top-level function instead of ``class Solution``, and
an output equal to the expected value unwrapped from a one-element list also passes, as
in APPS's ``testing_util``. Stdout is compared as LiveCodeBench compares it (``stdout_match``:
exact stripped lines, else ``Decimal`` per token). Correct = every kept test passes (reward +1,
else -1); a program that is not UTF-8 is ``NOT_UTF8`` without a run.
"""

from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Sequence

from fpa.grading.code import NOT_UTF8, extract_code, is_utf8, livecodebench, make_sandbox
from fpa.grading.grader import Grader
from fpa.progress import map_in_pool
from fpa.sandbox import Sandbox


def parse_spec(gold: str) -> dict:
    try:
        spec = json.loads(gold)
    except json.JSONDecodeError as error:
        raise ValueError(f"code_tests: gold is not a JSON test spec ({error.msg}): {gold[:80]!r}") from None
    if not isinstance(spec, dict) or spec.get("testtype") not in ("stdin", "functional") or not spec.get("tests"):
        raise ValueError(f"code_tests: expected {{testtype: stdin|functional, func_name, tests: [...]}}, "
                         f"got {gold[:80]!r}")
    return spec


def grade_tests_one(completion: str, gold: str, sandbox: Sandbox) -> tuple[bool, str]:
    spec = parse_spec(gold)
    tests = [{**test, "testtype": spec["testtype"]} for test in spec["tests"]]
    problem = {"question_id": "code_tests", "metadata": json.dumps({"func_name": spec.get("func_name")})}
    code = extract_code(completion)
    if not is_utf8(code):
        return NOT_UTF8
    return livecodebench.grade_one(problem, code, sandbox, tests=tests, style="apps")


def grade_tests_many(pairs: Sequence[tuple[str, str]], *, workers: int | None = None,
                     sandbox: Sandbox | None = None, **_) -> list[tuple[bool, str]]:  # fmt: skip
    """``[(correct, rule)]`` in input order; ``workers`` threads (default: the CPUs this process
    may use, i.e. the job's allocation on a cluster), one sandboxed process per test."""
    workers = workers or len(os.sched_getaffinity(0))
    for _, gold in pairs:  # fail on a malformed spec before any program runs
        parse_spec(gold)
    sandbox = sandbox or make_sandbox("livecodebench")
    with ThreadPoolExecutor(max(1, workers)) as pool:
        return map_in_pool(pool, lambda pair: grade_tests_one(pair[0], pair[1], sandbox), list(pairs),
                           "grade code_tests", unit="completion")


GRADERS = (Grader("code_tests", grade_tests_many, runs_code=True, gold_check=parse_spec),)
