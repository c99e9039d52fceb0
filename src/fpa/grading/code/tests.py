"""The code training reward (TACO, APPS: ``dataset.source: taco_apps``): a sample run on its problem's tests.

The training problems (``fpa code-train``): TACO and APPS rows (``question``, ``input_output`` JSON with
``inputs``/``outputs`` and optional ``fn_name``, ``starter_code``) become records whose ``answer`` is the
JSON test spec (``make_test_spec``) and whose problem is worded as LiveCodeBench's (``format_problem``).

Grader ``code_tests`` over ``(completion, tests)`` pairs, where ``tests`` is the JSON spec
``make_test_spec`` builds from a row's ``input_output``::

    {"testtype": "stdin" | "functional", "func_name": str | null,
     "tests": [{"input": str, "output": str}, ...]}

It reuses LiveCodeBench's checker in the same sandbox (``livecodebench.grade_one``, with
its limits: 6 s per test, the import header, first failure stops) in ``style="apps"``:
a call-based problem may define a top-level function instead of ``class Solution``, and
an output equal to the expected value unwrapped from a one-element list also passes, as
in APPS's ``testing_util``. Unlike LiveCodeBench, ``func_name`` must be defined by the program
itself (a top-level def, or a method of ``class Solution``), else the verdict is
``code_tests_undefined_function: <name>`` without a run: otherwise a program that defines nothing is
graded with whatever the import header binds under that name (``operator.add``, ``math.gcd``, ``max``),
which with the one-element-list rule can earn +1. Stdout is compared as LiveCodeBench compares it (``stdout_match``:
exact stripped lines, else ``Decimal`` per token). Correct = every kept test passes (reward +1,
else -1); a program that is not UTF-8 is ``NOT_UTF8`` without a run; a record whose spec is malformed is
``grader_error: ...`` (``fpa validate-benchmark`` refuses such a file before any sampling).
"""

from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Sequence

from fpa.grading.code import NOT_UTF8, extract_code, grader_error, is_utf8, livecodebench, make_sandbox
from fpa.grading.code.extract import defines_function
from fpa.grading.grader import Grader
from fpa.progress import map_in_pool
from fpa.samples.records import MathProblem
from fpa.samples.rows import read_records
from fpa.sandbox import Sandbox

#: Tests kept per training problem (the first ones): bounds the reward's cost per sample
#: and the size of the offline dataset files (each of the K samples carries its problem's
#: tests). Tests beyond MAX_TEST_BYTES of inputs + outputs are dropped too (the first one
#: is always kept): some TACO tests are megabytes.
MAX_TESTS = 16
MAX_TEST_BYTES = 256 << 10


def parse_spec(gold: str) -> dict:
    """The test spec of one record, every test checked against the family's schema; a ``ValueError``
    naming the field (``tests[3].output``) and what was expected."""
    try:
        spec = json.loads(gold)
    except json.JSONDecodeError as error:
        raise ValueError(f"code_tests: gold is not a JSON test spec ({error.msg}): {gold[:80]!r}") from None
    if not isinstance(spec, dict) or spec.get("testtype") not in ("stdin", "functional"):
        raise ValueError(f"code_tests: expected {{testtype: stdin|functional, func_name, tests: [...]}}, "
                         f"got {gold[:80]!r}")
    if spec["testtype"] == "functional" and not (isinstance(spec.get("func_name"), str) and spec["func_name"]):
        raise ValueError(f"code_tests: func_name: expected a function name for a functional spec, got "
                         f"{spec.get('func_name')!r}")
    tests = spec.get("tests")
    if not isinstance(tests, list) or not tests:
        raise ValueError(f"code_tests: tests: expected a non-empty list, got {type(tests).__name__} {str(tests)[:60]}")
    for index, test in enumerate(tests):
        if not isinstance(test, dict):
            raise ValueError(f"code_tests: tests[{index}]: expected an object with input and output, got "
                             f"{type(test).__name__}")
        for field in ("input", "output"):
            if not isinstance(test.get(field), str):
                raise ValueError(f"code_tests: tests[{index}].{field}: expected a string, got "
                                 f"{'nothing' if field not in test else type(test[field]).__name__}")
    return spec


def grade_tests_one(completion: str, gold: str, sandbox: Sandbox) -> tuple[bool, str]:
    """One record's verdict; a record the grader cannot grade (a malformed spec) is ``grader_error``, so
    that it costs that record only."""
    try:
        return _grade_tests_one(completion, gold, sandbox)
    except Exception as error:  # noqa: BLE001  the record's verdict, not its job's end
        return grader_error(error)


def _grade_tests_one(completion: str, gold: str, sandbox: Sandbox) -> tuple[bool, str]:
    spec = parse_spec(gold)
    tests = [{**test, "testtype": spec["testtype"]} for test in spec["tests"]]
    problem = {"question_id": "code_tests", "metadata": json.dumps({"func_name": spec.get("func_name")})}
    code = extract_code(completion)
    if not is_utf8(code):
        return NOT_UTF8
    func_name = spec.get("func_name")
    if spec["testtype"] == "functional" and not defines_function(code, func_name, in_class="Solution"):
        return False, f"code_tests_undefined_function: {func_name}"  # not a name LCB's import header binds
    return livecodebench.grade_one(problem, code, sandbox, tests=tests, style="apps")


def grade_tests_many(pairs: Sequence[tuple[str, str]], *, workers: int | None = None,
                     sandbox: Sandbox | None = None, **_) -> list[tuple[bool, str]]:  # fmt: skip
    """``[(correct, rule)]`` in input order; ``workers`` threads (default: the CPUs this process
    may use, i.e. the job's allocation on a cluster), one sandboxed process per test."""
    workers = workers or len(os.sched_getaffinity(0))
    sandbox = sandbox or make_sandbox("livecodebench")
    with ThreadPoolExecutor(max(1, workers)) as pool:
        return map_in_pool(pool, lambda pair: grade_tests_one(pair[0], pair[1], sandbox), list(pairs),
                           "grade code_tests", unit="completion")


# --- the training problems: TACO and APPS rows with their tests -----------------------------------


def _text(value) -> str:
    if isinstance(value, list):
        return "\n".join(str(v) for v in value)
    return str(value)


def make_test_spec(input_output, where: str, max_tests: int = MAX_TESTS) -> dict | None:
    """A TACO/APPS ``input_output`` as the ``code_tests`` spec; None when it has no usable tests.

    stdin: inputs/outputs are strings (or lists of lines). Call-based (``fn_name``): each
    input is the list of arguments, each output the expected value (APPS and TACO often
    wrap it in a one-element list; the reward accepts either, as APPS's checker does).
    """
    if isinstance(input_output, str):
        if not input_output.strip():
            return None
        try:
            input_output = json.loads(input_output)
        except json.JSONDecodeError as error:
            raise ValueError(f"{where}: input_output: invalid JSON ({error.msg})") from None
    inputs, outputs = input_output.get("inputs") or [], input_output.get("outputs") or []
    if len(inputs) != len(outputs):
        raise ValueError(f"{where}: input_output: {len(inputs)} inputs but {len(outputs)} outputs")
    if not inputs:
        return None
    func_name = input_output.get("fn_name")
    if func_name:
        tests = [{"input": "\n".join(json.dumps(arg) for arg in (args if isinstance(args, list) else [args])),
                  "output": json.dumps(out)} for args, out in zip(inputs, outputs)]
    else:
        tests = [{"input": _text(inp), "output": _text(out)} for inp, out in zip(inputs, outputs)]
    kept, size = [], 0
    for test in tests[:max_tests]:
        size += len(test["input"]) + len(test["output"])
        if kept and size > MAX_TEST_BYTES:
            break
        kept.append(test)
    return {"testtype": "functional" if func_name else "stdin", "func_name": func_name or None, "tests": kept}


def load_code_train(path: str | os.PathLike, source: str) -> tuple[list[MathProblem], int]:
    """TACO or APPS rows -> (problems with a test spec as answer, rows dropped for having no tests)."""
    problems, dropped = [], 0
    for index, row in enumerate(read_records(path, ("question",))):
        key = row.get("problem_id", index)
        spec = make_test_spec(row.get("input_output"), f"{path}: row {index}")
        if spec is None:
            dropped += 1
            continue
        starter = row.get("starter_code") or ""
        problem = livecodebench.format_problem(row["question"], starter)
        problems.append(MathProblem(f"{source}/{key}", problem, json.dumps(spec, sort_keys=True), source))
    return problems, dropped


def _question_key(problem: str) -> str:
    return " ".join(problem.split())


def build_code_train(files: dict[str, str | os.PathLike]) -> tuple[list[MathProblem], dict]:
    """Problems of every file (``{source: path}``, in order), de-duplicated by statement.

    TACO contains APPS problems, so a problem whose statement (whitespace-normalised)
    was already taken from an earlier file is skipped. Returns (problems, summary).
    """
    seen: set[str] = set()
    problems, summary = [], {}
    for source, path in files.items():
        loaded, dropped = load_code_train(path, source)
        kept = []
        for problem in loaded:
            if _question_key(problem.problem) not in seen:
                seen.add(_question_key(problem.problem))
                kept.append(problem)
        problems += kept
        summary[source] = {"rows": len(loaded) + dropped, "no_tests": dropped, "duplicates": len(loaded) - len(kept),
                           "kept": len(kept)}
    if not problems:
        raise ValueError(f"code training set is empty: {summary}")
    return problems, summary


GRADERS = (Grader("code_tests", grade_tests_many, runs_code=True, gold_check=parse_spec, rewards=("taco_apps",)),)
