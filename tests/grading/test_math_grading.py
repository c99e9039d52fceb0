"""grade_math rules and grade_many's process pool with a real timeout."""

import threading
import time

import pytest

from fpa.grading.answers import last_boxed
from fpa.grading.math import RULES, GradeResult, _without_worker, grade_many, grade_math

# Math-Verify parses this fine, then sympy tries to evaluate 9^(9^(9^9)) and never returns.
PATHOLOGICAL = "The final answer is \\boxed{9^{9^{9^{9}}}}"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("so \\boxed{\\frac{1}{2}}.", "\\frac{1}{2}"),
        ("\\boxed{1} then \\boxed{\\{1, \\frac{2}{3}\\}}", "\\{1, \\frac{2}{3}\\}"),  # last, nested
        ("\\boxed{\\}}", "\\}"),  # escaped brace does not close
        ("$= \\boxed {17}.$$", "17"),  # space before the brace (MATH train)
        ("our answer is $\\boxed 2$.", "2"),  # brace-less (MATH train)
        ("\\fbox{5}", "5"),
        ("no box here", None),
        ("\\boxed{1} and a truncated \\boxed{\\frac{1", None),  # last box unclosed
    ],
)
def test_last_boxed(text, expected):
    assert last_boxed(text) == expected


@pytest.mark.parametrize(
    "completion, gold, expected",
    [
        ("The final answer is \\boxed{\\frac{1}{2}}", "0.5", GradeResult(True, "math_verify", "\\frac{1}{2}")),
        ("The final answer is \\boxed{1,000}", "1000", GradeResult(True, "math_verify", "1,000")),
        (
            "\\boxed{(3, \\pi/2)}",
            "\\left( 3, \\frac{\\pi}{2} \\right)",
            GradeResult(True, "math_verify", "(3, \\pi/2)"),
        ),
        ("The final answer is \\boxed{3}", "4", GradeResult(False, "math_verify", "3")),
        ("\\boxed{4} wait, no: \\boxed{5}", "4", GradeResult(False, "math_verify", "5")),  # last box counts
        ("The final answer is 4", "4", GradeResult(False, "no_boxed", None)),
        ("\\boxed{b>a>c}", "b > a > c", GradeResult(True, "exact_string", "b>a>c")),  # Math-Verify: no parse
        ("\\boxed{c>a>b}", "b > a > c", GradeResult(False, "parse_error", "c>a>b")),
    ],
)
def test_grade_math(completion, gold, expected):
    assert grade_math(completion, gold) == expected
    assert expected.rule in RULES


def test_string_rule_survives_a_lost_worker():
    assert _without_worker("\\boxed{ b>a>c }", "b > a > c", "timeout") == GradeResult(True, "exact_string", "b>a>c")
    assert _without_worker("\\boxed{x}", "y", "timeout") == GradeResult(False, "timeout", "x")
    assert _without_worker("x", "y", "worker_died") == GradeResult(False, "no_boxed", None)


def test_grade_many_times_out_kills_and_replaces_the_worker():
    # In a thread: Math-Verify's own signal-based timeout would fail there.
    pairs = [(PATHOLOGICAL, "1"), ("\\boxed{2}", "2"), ("\\boxed{3}", "4"), (PATHOLOGICAL, "2")]
    out = {}
    thread = threading.Thread(target=lambda: out.update(results=grade_many(pairs, workers=1, timeout_s=1.0)))
    start = time.monotonic()
    thread.start()
    thread.join(timeout=50)
    assert not thread.is_alive(), "grade_many hung"
    assert [(result.correct, result.rule) for result in out["results"]] == [
        (False, "timeout"),
        (True, "math_verify"),  # graded by the replacement worker
        (False, "math_verify"),
        (False, "timeout"),
    ]
    assert out["results"][0].extracted == "9^{9^{9^{9}}}"
    assert time.monotonic() - start < 50


def test_grade_many_keeps_order_with_two_workers():
    pairs = [(f"\\boxed{{{i}}}", str(i if i % 3 else i + 1)) for i in range(12)] + [("none", "1")]
    results = grade_many(pairs, workers=2, timeout_s=20)
    assert [result.correct for result in results] == [bool(i % 3) for i in range(12)] + [False]
    assert results[-1].rule == "no_boxed"
    assert grade_many([], workers=2, timeout_s=1) == []


@pytest.mark.parametrize("workers, timeout_s, match", [(0, 1.0, "workers"), (1, 0, "timeout_s")])
def test_grade_many_argument_errors(workers, timeout_s, match):
    with pytest.raises(ValueError, match=match):
        grade_many([("\\boxed{1}", "1")], workers=workers, timeout_s=timeout_s)
