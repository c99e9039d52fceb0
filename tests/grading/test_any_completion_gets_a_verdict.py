"""A grader returns a verdict with its rule for any completion (issue 52): no exception for one record
fails a job. Completions past Python's int-string limit, in other scripts' digits, with lone surrogates,
NULs and deep nesting, through the toy, math, LiveCodeBench and code_tests graders."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from fpa.grading import get_grader
from fpa.grading.answers import grade_toy_many
from fpa.grading.code import NOT_UTF8, grade_code_many
from fpa.grading.code.tests import grade_tests_many

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "lcb" / "test6_fixture.jsonl"
#: more digits than int() converts here (the limit is 4,300 unless something in this process raised it)
PAST_THE_LIMIT = max(sys.get_int_max_str_digits(), 4300) + 1
SUM = "a, b = map(int, input().split())\nprint(a + b)\n"
HOSTILE_ANSWERS = ["1" * PAST_THE_LIMIT, "-" + "0" * PAST_THE_LIMIT + "7", "1" * PAST_THE_LIMIT + ".5", "١٢", "𝟏𝟐",
                   "²", "\ud800", "1\x00"]
#: Math-Verify's verdicts on them against the gold 12 (it reads no digits but ASCII ones)
MATH_RULES = ["parse_error", "math_verify", "math_verify", "parse_error", "parse_error", "parse_error", "parse_error",
              "parse_error"]


def test_the_toy_grader_reads_integers_of_any_length_and_script():
    pairs = [("\\boxed{" + "1" * PAST_THE_LIMIT + "}", "1"), ("\\boxed{" + "0" * PAST_THE_LIMIT + "7}", "7"),
             ("\\boxed{-" + "0" * PAST_THE_LIMIT + "}", "0"), ("\\boxed{١٢}", "12"), ("\\boxed{²}", "2")]
    assert grade_toy_many(pairs) == [(False, "integer"), (True, "integer"), (True, "integer"), (True, "integer"),
                                     (False, "integer")]


@settings(max_examples=200, derandomize=True, deadline=None, database=None)
@given(answer=st.sampled_from(HOSTILE_ANSWERS + ["{" * 2000 + "1" + "}" * 2000, "(" * 500, "x" * 100_000]) | st.text() | st.from_regex(r"[+-]?[0-9]{1,30}", fullmatch=True),
       gold=st.integers(-10**6, 10**6))
def test_the_toy_grader_gives_a_verdict_for_any_boxed_text(answer, gold):
    [(correct, rule)] = grade_toy_many([(f"\\boxed{{{answer}}}", str(gold))])
    assert rule in ("integer", "no_boxed")
    if re.fullmatch(r"[+-]?[0-9]{1,30}", answer):
        assert (correct, rule) == (int(answer) == gold, "integer")


def test_the_math_grader_gives_a_verdict_for_hostile_answers():
    pairs = [(f"\\boxed{{{answer}}}", "12") for answer in HOSTILE_ANSWERS] + [("\ud800 no box", "12")]
    verdicts = get_grader("math")(pairs, workers=1)
    assert verdicts == [(False, rule) for rule in MATH_RULES + ["no_boxed"]]  # no worker_died: none raised


def test_code_that_is_not_utf8_is_graded_without_a_run(own_programs_sandbox):
    lone_surrogate = "```python\n" + SUM.replace("print(", "print('\ud800', ") + "```"
    pairs = [(lone_surrogate, "fx_stdin_sum"), (SUM, "fx_stdin_sum")]
    assert grade_code_many("livecodebench", pairs, data_path=FIXTURE, sandbox=own_programs_sandbox) == [
        NOT_UTF8, (True, "lcb_pass")]
    spec = json.dumps({"testtype": "stdin", "func_name": None, "tests": [{"input": "1 2\n", "output": "3\n"}]})
    assert grade_tests_many([(lone_surrogate, spec), (SUM, spec)], workers=1, sandbox=own_programs_sandbox) == [
        NOT_UTF8, (True, "lcb_pass")]
