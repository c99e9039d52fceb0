"""LiveCodeBench (code_generation_lite, release v6) on its own test cases.

The prompts: the statement and LiveCodeBench's format message (``format_problem``). The program: the
completion's code, whole.

Format (``livecodebench/code_generation_lite``): ``public_test_cases`` is a JSON list of
``{"input", "output", "testtype": "stdin" | "functional"}``; ``private_test_cases`` is
the same list either as JSON or as ``base64(zlib(pickle(json_string)))``; ``metadata``
is JSON with ``func_name`` for functional (LeetCode-style, ``class Solution``) problems.

Pickle safety: the host never unpickles. A compressed ``private_test_cases`` string is
sent into the sandbox, where ``DECODER`` unpickles it with an ``Unpickler`` whose
``find_class`` refuses every global (so even there a hostile pickle can build only
plain values), checks the result is a ``str`` and prints it; the host only ``json.loads``.

Checks follow LCB's ``testing_util.run_test`` (``fpa.grading.code.lcb_run`` runs the program as it
does: its import header and recursion limit, ``reliability_guard``, stdin programs wrapped in a
function with ``SystemExit`` caught, ``class Solution`` by LCB's own text test, a time limit per
step, a returned tuple as a list at the top level only). Functional inputs are one JSON value per
line, the result must equal ``json.loads(output)`` (its ints of any length); stdin programs must
print the expected lines as ``stdout_match`` compares them (exact stripped lines, else ``Decimal``
per token). Each test has ``timeout_s`` of its own (LCB: 6 s); the first failing test decides.

No verdict comes out of the sandbox. A stdin program's output is compared here. A
functional program gets only the inputs (on stdin; the expected outputs never enter the
sandbox) and ``FUNCTIONAL`` writes back what it returns for each, as plain data
(``fpa.grading.code.values``), which ``grade_one`` compares here with the expected value.
A value that cannot cross as data (an object of the program's own class, whatever its
``__eq__``) is a wrong answer.
"""

from __future__ import annotations

import decimal
import json
import os

from fpa.grading.code import lcb_run
from fpa.grading.code.bench import CodeBench, whole_program
from fpa.grading.code.extract import preloaded
from fpa.grading.code.stdout_match import stdout_matches
from fpa.grading.code.values import Opaque, loads
from fpa.samples.records import MathProblem
from fpa.samples.rows import read_records
from fpa.sandbox import InputTooLarge, Limits, RunResult, Sandbox

# LCB's ``timeout`` (6 s) is ``timeout_s``: each step of a program (compiling it, each test) has its own. The
# CPU limit is a backstop only: a run of many functional tests may use a few seconds on each.
LIMITS = Limits(timeout_s=6.0, cpu_s=600, memory_bytes=4 << 30, output_bytes=256 << 20)
START_S = 5.0  # the interpreter and the runner before the program's first step
#: LiveCodeBench's format messages (lcb_runner/prompts/code_generation.py), restated.
WITH_STARTER_CODE = ("You will use the following starter code to write the solution to the problem and enclose "
                     "your code within delimiters.")
WITHOUT_STARTER_CODE = ("Read the inputs from stdin solve the problem and write the answer to stdout (do not directly "
                        "test on the sample inputs). Enclose your code within delimiters as follows. Ensure that when "
                        "the python program runs, it reads the inputs, runs the algorithm and writes output to STDOUT.")

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


def load_tasks(path: str | os.PathLike) -> dict[str, dict]:
    """LCB JSONL: question_id -> record (test cases still encoded)."""
    with open(path) as handle:
        records = [json.loads(line) for line in handle if line.strip()]
    return {record["question_id"]: record for record in records}


def load_problems(path: str | os.PathLike, source: str = "livecodebench") -> list[MathProblem]:
    """LiveCodeBench's ``question_content`` and its format message: the starter code (functional), or "read
    from stdin, write to stdout"."""
    problems = []
    for row in read_records(path, {"question_id": str, "question_content": str}):
        starter_code = row.get("starter_code")
        if not isinstance(starter_code, (str, type(None))):
            raise ValueError(f"{path}: {row['question_id']}: field 'starter_code': expected text, got "
                             f"{type(starter_code).__name__}")
        problems.append(MathProblem(row["question_id"], format_problem(row["question_content"], starter_code),
                                    row["question_id"], source))
    return problems


def format_problem(question: str, starter_code: str | None) -> str:
    """The statement plus LCB's format message (starter code, or a stdin/stdout program)."""
    if starter_code and starter_code.strip():
        return f"{question.strip()}\n\n{WITH_STARTER_CODE}\n```python\n{starter_code.rstrip()}\n```"
    return f"{question.strip()}\n\n{WITHOUT_STARTER_CODE}\n```python\n# YOUR CODE HERE\n```"


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
    ``fpa.grading.code.tests``) also accepts an output equal to the expected one unwrapped from a 1-list.
    A program too large for the sandbox's files is this record's verdict, ``lcb_too_large``."""
    try:
        return _grade_one(problem, code, sandbox, tests, style)
    except InputTooLarge:
        return False, "lcb_too_large"


def _grade_one(problem: dict, code: str, sandbox: Sandbox, tests: list[dict] | None, style: str) -> tuple[bool, str]:
    tests = all_tests(problem, sandbox) if tests is None else tests
    if not tests:
        raise ValueError(f"{problem['question_id']}: no test cases")
    if tests[0]["testtype"] == "functional":
        return _grade_functional(problem, code, sandbox, tests, style)
    return _grade_records(lcb_run.STDIN, code, sandbox, tests, lambda output, test: stdout_matches(output, test["output"]))


def _grade_records(runner: str, code: str, sandbox: Sandbox, tests: list[dict], matches, args=()) -> tuple[bool, str]:
    """One run of ``runner`` over every test (LCB's ``run_test`` loop, in one process), each test's record
    compared here in order: the first that is not a match decides. The run's bound is ``START_S``, the compile
    step's ``timeout``, and ``check_correctness``'s ``(timeout + 1) * tests + 5``."""
    limit = sandbox.limits.timeout_s
    job = json.dumps({"inputs": [test["input"] for test in tests],
                      "preload": preloaded(lcb_run.PROCESS_MODULES, [code])})
    files = {"program.py": code}
    result = sandbox.run_python(runner, args=[str(limit), *args], stdin=job, files=files,
                                timeout_s=START_S + limit + (limit + 1) * len(tests) + 5)  # fmt: skip
    records = result.stdout.split("\n")[:-1]  # complete lines only
    for index, test in enumerate(tests):
        if index >= len(records):  # the run ended (or was stopped) before this one
            return False, _run_failure(result)
        try:
            kind, got = _returned(records[index])
            if kind != "value":
                return False, "lcb_timeout" if kind == "timeout" else "lcb_runtime_error"
            if not matches(got, test):
                return False, "lcb_wrong_answer"
        except Exception:  # not a record, or a comparison that raises (as it would in LCB's process)
            return False, "lcb_runtime_error"
    return (True, "lcb_pass") if result.ok else (False, _run_failure(result))


def _grade_functional(problem: dict, code: str, sandbox: Sandbox, tests: list[dict], style: str) -> tuple[bool, str]:
    """The program's value for each input, from the sandbox; compared here, test by test."""
    func_name = json.loads(problem["metadata"])["func_name"]
    return _grade_records(lcb_run.FUNCTIONAL, code, sandbox, tests,
                          lambda got, test: _functional_matches(got, expected_value(test["output"]), style), [func_name])


def expected_value(output: str):
    """``json.loads`` of an expected output, its ints of any length (LCB's process allows 50,000
    digits; past that it fails every program, a defect not kept here)."""
    return json.loads(output, parse_int=_int_of_any_length)


def _int_of_any_length(text: str) -> int:
    return int(text) if len(text) <= 4000 else int(decimal.Decimal(text))


def _returned(line: str) -> tuple[str, object]:
    """``(kind, value)`` of one record: ``value`` decoded (a stdin test's output text), or ``Opaque`` for one
    that could not cross;
    ``timeout`` or ``raised`` (value None) for a call that did not return."""
    record = loads(line)
    if isinstance(record, list) and len(record) == 2 and record[0] in ("value", "opaque", "output"):
        return "value", Opaque(str(record[1])) if record[0] == "opaque" else record[1]
    if isinstance(record, list) and record and record[0] in ("timeout", "raised"):
        return record[0], None
    raise ValueError(f"not a result record: {line[:80]!r}")


def _functional_matches(got, want, style: str) -> bool:
    """LCB: the result (a tuple made a list, in the sandbox) equals the expected value; APPS also
    accepts the expected value unwrapped from a one-element list."""
    return bool(got == want) or (style == "apps" and isinstance(want, list) and len(want) > 0 and bool(got == want[0]))


def _run_failure(result: RunResult) -> str:
    return f"lcb_{result.failure('runtime_error')}"


def grade_task(problem: dict, codes: list[str], sandbox: Sandbox) -> list[tuple[bool, str]]:
    """Every program of one problem, its tests decoded once."""
    tests = all_tests(problem, sandbox)
    return [grade_one(problem, code, sandbox, tests=tests) for code in codes]


# no canonical solutions in the LiveCodeBench format
GRADERS = (CodeBench("livecodebench", task_file="livecodebench_v6", limits=LIMITS, load_tasks=load_tasks,
                     load_problems=load_problems, program=whole_program, grade_task=grade_task),)
