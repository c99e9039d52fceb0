"""Where our grader and a plain Math-Verify call disagree, and why ours is right: the causes that
``grading.py`` found, listed in docs/archive/benchmarks.md ("Disagreements with Math-Verify"), on cases like the
benchmark found them (golds 510 of aime25/11 and t(0,4] of olympiadbench/2045 are real)."""

import pytest
from math_verify import parse, verify

from fpa.grading.math import GradeResult, grade_math

REASONING = "The ratio is $\\frac{500}{50}=10$, so each of the $8$ boxes holds $10$ coins."


def plain_math_verify(completion: str, gold: str) -> bool:
    """As ``grading.py`` called it: Math-Verify's defaults on the whole completion."""
    return verify(parse("\\boxed{" + gold + "}"), parse(completion))


@pytest.mark.parametrize(
    "completion, gold, ours",
    [
        # No box: the project's prompt asks for a boxed final answer; a number in the text is not one.
        (f"{REASONING}\n\nSo the answer is 8.", "8", GradeResult(False, "no_boxed", None)),
        # The last box never closes (truncated output): an earlier box is a draft, not the final answer.
        (f"First guess: $\\boxed{{510}}$.\n{REASONING}\n\nThe final answer is $\\boxed{{5", "510",
         GradeResult(False, "no_boxed", None)),
        # Garbage in the final box: Math-Verify falls back to a number of the reasoning.
        (f"{REASONING}\n\nThe final answer is $\\boxed{{?}}$.", "10", GradeResult(False, "parse_error", "?")),
        (f"{REASONING}\n\nThe final answer is \\boxed{{}}.", "10", GradeResult(False, "parse_error", "")),
        (f"{REASONING}\n\nThe final answer is \\boxed{{\\frac{{}}{{}}}}.", "10",
         GradeResult(False, "parse_error", "\\frac{}{}")),
    ],
)
def test_math_verify_credits_an_answer_that_is_not_the_final_box(completion, gold, ours):
    assert grade_math(completion, gold) == ours
    assert plain_math_verify(completion, gold) is True


def test_math_verify_misses_a_string_identical_answer_to_an_unparsable_gold():
    # olympiadbench/2045: the gold carries a stray "t" upstream (docs/gold_selfcheck.md); the answer
    # repeats it up to spacing, which our string rule credits, as it credits the gold itself.
    completion, gold = "The final answer is \\boxed{t(0, 4]}.", "t(0,4]"
    assert grade_math(completion, gold) == GradeResult(True, "exact_string", "t(0, 4]")
    assert plain_math_verify(completion, gold) is False
