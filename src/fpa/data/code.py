"""Code data: benchmark prompt records and the TACO + APPS training problems.

Benchmarks (``prepare-benchmark`` on a code column): every task becomes the common
record ``{id, problem, answer, source}``, where ``answer`` is the **task id** (the code
graders look the task up in the benchmark file, ``fpa.grading.code``) and ``problem`` is
the task statement as its upstream harness words it:

=============== ===================================================================
loader          problem
=============== ===================================================================
mbppplus        EvalPlus's MBPP+ ``prompt`` without its docstring quotes (statement +
                one example ``assert``, which names the function)
humanevalplus   "Complete the following Python function" + the ``prompt`` (signature
                and docstring) in a code block
bigcodebench    ``instruct_prompt`` (ends with "You should write self-contained code
                starting with: ```<code_prompt>```"); graded calibrated
livecodebench   ``question_content`` + LCB's format message: the starter code
                (functional) or "read from stdin, write to stdout"
=============== ===================================================================

Training (``code-train``): TACO and APPS rows (``question``, ``input_output`` JSON with
``inputs``/``outputs`` and optional ``fn_name``, ``starter_code``) become records whose
``answer`` is the JSON test spec the ``code_tests`` reward runs
(``fpa.grading.code.tests``): ``{"testtype", "func_name", "tests": [{"input", "output"}]}``
in LiveCodeBench's encoding (stdin text; functional: one JSON argument per line).
"""

from __future__ import annotations

import json
import os
import re

from fpa.data.validate import read_records
from fpa.samples.records import MathProblem

#: LiveCodeBench's format messages (lcb_runner/prompts/code_generation.py), restated.
WITH_STARTER_CODE = ("You will use the following starter code to write the solution to the problem and enclose "
                     "your code within delimiters.")
WITHOUT_STARTER_CODE = ("Read the inputs from stdin solve the problem and write the answer to stdout (do not directly "
                        "test on the sample inputs). Enclose your code within delimiters as follows. Ensure that when "
                        "the python program runs, it reads the inputs, runs the algorithm and writes output to STDOUT.")
#: Tests kept per training problem (the first ones): bounds the reward's cost per sample
#: and the size of the offline dataset files (each of the K samples carries its problem's
#: tests). Tests beyond MAX_TEST_BYTES of inputs + outputs are dropped too (the first one
#: is always kept): some TACO tests are megabytes.
MAX_TESTS = 16
MAX_TEST_BYTES = 256 << 10
_DOCSTRING = re.compile(r'^\s*"""\s*\n?(.*?)\n?\s*"""\s*$', re.DOTALL)


def format_problem(question: str, starter_code: str | None) -> str:
    """The statement plus LCB's format message (starter code, or a stdin/stdout program)."""
    if starter_code and starter_code.strip():
        return f"{question.strip()}\n\n{WITH_STARTER_CODE}\n```python\n{starter_code.rstrip()}\n```"
    return f"{question.strip()}\n\n{WITHOUT_STARTER_CODE}\n```python\n# YOUR CODE HERE\n```"


def load_mbppplus(path, source: str = "mbppplus") -> list[MathProblem]:
    problems = []
    for row in read_records(path, {"task_id": str, "prompt": str}):
        match = _DOCSTRING.match(row["prompt"])
        statement = match.group(1).strip() if match else row["prompt"].strip()
        problems.append(MathProblem(row["task_id"], statement, row["task_id"], source))
    return problems


def load_humanevalplus(path, source: str = "humanevalplus") -> list[MathProblem]:
    return [MathProblem(row["task_id"], "Complete the following Python function.\n```python\n"
                        f"{row['prompt'].rstrip()}\n```", row["task_id"], source)
            for row in read_records(path, {"task_id": str, "prompt": str})]


def load_bigcodebench(path, source: str = "bigcodebench") -> list[MathProblem]:
    return [MathProblem(row["task_id"], row["instruct_prompt"].strip(), row["task_id"], source)
            for row in read_records(path, {"task_id": str, "instruct_prompt": str})]


def load_livecodebench(path, source: str = "livecodebench") -> list[MathProblem]:
    problems = []
    for row in read_records(path, {"question_id": str, "question_content": str}):
        starter_code = row.get("starter_code")
        if not isinstance(starter_code, (str, type(None))):
            raise ValueError(f"{path}: {row['question_id']}: field 'starter_code': expected text, got "
                             f"{type(starter_code).__name__}")
        problems.append(MathProblem(row["question_id"], format_problem(row["question_content"], starter_code),
                                    row["question_id"], source))
    return problems


# --- training problems: TACO and APPS ------------------------------------------------


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
        problem = format_problem(row["question"], starter)
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
