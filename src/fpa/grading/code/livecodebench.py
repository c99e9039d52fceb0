"""LiveCodeBench (code_generation_lite, release v6) grader on its own test cases.

Format (``livecodebench/code_generation_lite``): ``public_test_cases`` is a JSON list of
``{"input", "output", "testtype": "stdin" | "functional"}``; ``private_test_cases`` is
the same list either as JSON or as ``base64(zlib(pickle(json_string)))``; ``metadata``
is JSON with ``func_name`` for functional (LeetCode-style, ``class Solution``) problems.

Pickle safety: the host never unpickles. A compressed ``private_test_cases`` string is
sent into the sandbox, where ``DECODER`` unpickles it with an ``Unpickler`` whose
``find_class`` refuses every global (so even there a hostile pickle can build only
plain values), checks the result is a ``str`` and prints it; the host only ``json.loads``.

Checks follow LCB's ``testing_util.run_test``: functional inputs are one JSON value per
line, the result (tuples as lists) must equal ``json.loads(output)``; stdin programs
must print the expected lines as ``stdout_match`` compares them (exact stripped lines, else
``Decimal`` per token). Each test runs with ``timeout_s`` (LCB: 6 s); the first failing
test decides the verdict.

No verdict comes out of the sandbox. A stdin program's output is compared here. A
functional program gets only the inputs (on stdin; the expected outputs never enter the
sandbox) and ``FUNCTIONAL`` writes back what it returns for each, as plain data
(``fpa.grading.code.values``), which ``grade_one`` compares here with the expected value.
A value that cannot cross as data (an object of the program's own class, whatever its
``__eq__``) is a wrong answer.
"""

from __future__ import annotations

import json
import os

from fpa.grading.code.bench import CodeBench
from fpa.grading.code.encoder import ENCODER
from fpa.grading.code.stdout_match import stdout_matches
from fpa.grading.code.values import Opaque, loads
from fpa.sandbox import InputTooLarge, Limits, RunResult, Sandbox

# LCB's testing_util prepends an import header to every program; this is its core.
# LCB's evaluation process also raises Python's int-string limit to 50,000 digits (a program printing a
# 6,021-digit integer passes there), which a program's own process must then set itself.
HEADER = ("from typing import *\nfrom collections import *\nfrom itertools import *\nfrom functools import *\n"
          "from heapq import *\nfrom bisect import *\nimport math, string, re, sys, random, collections, heapq\n"
          "sys.set_int_max_str_digits(50000)\n")
LIMITS = Limits(timeout_s=6.0, cpu_s=10, memory_bytes=4 << 30, output_bytes=256 << 20)

DECODER = r"""
import base64, io, pickle, sys, zlib
class NoGlobals(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"global {module}.{name} refused")
raw = zlib.decompress(base64.b64decode(sys.stdin.buffer.read()))
value = NoGlobals(io.BytesIO(raw)).load()
if not isinstance(value, str):
    raise SystemExit(f"private_test_cases: expected a pickled JSON string, got {type(value).__name__}")
sys.stdout.write(value)
"""

# One record per input, in order: ["value", <tagged JSON>] or ["opaque", <type name>]. The
# program's own prints go to stderr; it can write records itself, but only of values.
FUNCTIONAL = ENCODER + r"""
import json, os, sys
func_name, style = sys.argv[1], sys.argv[2]
job = json.loads(sys.stdin.read())
channel = os.dup(1)
os.dup2(2, 1)
write = os.write
def report(record):
    data = memoryview((record + "\n").encode())
    while data:
        data = data[write(channel, data):]
namespace = {"__name__": "__solution__"}
exec(compile(job["code"], "solution.py", "exec"), namespace)
if style == "apps" and "Solution" not in namespace:  # APPS/TACO call-based: a top-level function
    method = namespace[func_name]
else:
    method = getattr(namespace["Solution"](), func_name)
def plain(value):
    return [plain(v) for v in value] if isinstance(value, (list, tuple)) else value
for line in job["inputs"]:
    value = plain(method(*([json.loads(arg) for arg in line.split("\n")] if line else [])))
    try:
        report('["value", ' + encode(value) + "]")
    except Unserializable as error:
        report(_dumps(["opaque", str(error)]))
"""


def load_problems(path: str | os.PathLike) -> dict[str, dict]:
    """LCB JSONL: question_id -> record (test cases still encoded)."""
    with open(path) as handle:
        records = [json.loads(line) for line in handle if line.strip()]
    return {record["question_id"]: record for record in records}


def decode_tests(field: str, sandbox: Sandbox) -> list[dict]:
    """Test cases from a JSON or compressed-pickle field; the pickle is opened only in the sandbox."""
    try:
        return json.loads(field)
    except json.JSONDecodeError:
        pass
    result = sandbox.run_python(DECODER, stdin=field, timeout_s=60)
    if result.returncode != 0 or result.stdout_truncated:
        raise ValueError(f"private_test_cases: cannot decode ({result.stderr.strip()[-300:] or 'output truncated'})")
    return json.loads(result.stdout)


def all_tests(problem: dict, sandbox: Sandbox) -> list[dict]:
    return decode_tests(problem["public_test_cases"], sandbox) + decode_tests(problem["private_test_cases"], sandbox)


def grade_one(problem: dict, code: str, sandbox: Sandbox, tests: list[dict] | None = None,
              style: str = "lcb") -> tuple[bool, str]:
    """LCB's check of ``code`` on the problem's tests. ``style="apps"`` (the TACO/APPS reward,
    ``fpa.grading.code.tests``) also accepts a top-level function and a 1-list-wrapped output.
    A program too large for the sandbox's files is this record's verdict, ``lcb_too_large``."""
    try:
        return _grade_one(problem, code, sandbox, tests, style)
    except InputTooLarge:
        return False, "lcb_too_large"


def _grade_one(problem: dict, code: str, sandbox: Sandbox, tests: list[dict] | None, style: str) -> tuple[bool, str]:
    tests = all_tests(problem, sandbox) if tests is None else tests
    code = HEADER + code
    if not tests:
        raise ValueError(f"{problem['question_id']}: no test cases")
    if tests[0]["testtype"] == "functional":
        return _grade_functional(problem, code, sandbox, tests, style)
    for test in tests:
        result = sandbox.run_python(code, stdin=test["input"])
        if result.timed_out:
            return False, "lcb_timeout"
        if result.memory_exceeded:  # the run's processes together went over Limits.total_memory_bytes
            return False, "lcb_memory_exceeded"
        if result.returncode != 0:
            return False, "lcb_runtime_error"
        if not stdout_matches(result.stdout, test["output"]):
            return False, "lcb_wrong_answer"
    return True, "lcb_pass"


def _grade_functional(problem: dict, code: str, sandbox: Sandbox, tests: list[dict], style: str) -> tuple[bool, str]:
    """The program's value for each input, from the sandbox; compared here, test by test."""
    func_name = json.loads(problem["metadata"])["func_name"]
    job = json.dumps({"code": code, "inputs": [test["input"] for test in tests]})
    timeout = sandbox.limits.timeout_s * len(tests)
    result = sandbox.run_python(FUNCTIONAL, args=[func_name, style], stdin=job, timeout_s=timeout)
    records = result.stdout.split("\n")[:-1]  # complete lines only
    for index, test in enumerate(tests):
        if index >= len(records):  # the run ended (or was stopped) before returning this one
            return False, _run_failure(result)
        try:
            if not _functional_matches(_returned(records[index]), json.loads(test["output"]), style):
                return False, "lcb_wrong_answer"
        except Exception:  # not a record, or a comparison that raises (as it would in LCB's process)
            return False, "lcb_runtime_error"
    return (True, "lcb_pass") if result.ok else (False, _run_failure(result))


def _returned(line: str):
    """The value of one record: decoded, or ``Opaque`` for one that could not cross."""
    record = loads(line)
    if isinstance(record, list) and len(record) == 2 and record[0] in ("value", "opaque"):
        return record[1] if record[0] == "value" else Opaque(str(record[1]))
    raise ValueError(f"not a result record: {line[:80]!r}")


def _functional_matches(got, want, style: str) -> bool:
    """LCB: the result (tuples as lists) equals the expected value; APPS also accepts the
    expected value unwrapped from a one-element list."""
    return bool(got == want) or (style == "apps" and isinstance(want, list) and len(want) > 0 and bool(got == want[0]))


def _run_failure(result: RunResult) -> str:
    return f"lcb_{result.failure('runtime_error')}"


def default_sandbox() -> Sandbox:
    return Sandbox(LIMITS)


def grade_task(problem: dict, codes: list[str], sandbox: Sandbox) -> list[tuple[bool, str]]:
    """Every program of one problem, its tests decoded once."""
    tests = all_tests(problem, sandbox)
    return [grade_one(problem, code, sandbox, tests=tests) for code in codes]


# no canonical solutions in the LiveCodeBench format
GRADERS = (CodeBench("livecodebench", task_file="livecodebench_v6", limits=LIMITS, load_tasks=load_problems,
                     grade_task=grade_task),)
