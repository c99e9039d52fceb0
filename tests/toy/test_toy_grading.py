import pytest

from fpa.grading.answers import last_boxed, grade_toy


@pytest.mark.parametrize(
    "text, expected",
    [
        ("The final answer is \\boxed{16}", "16"),
        ("\\boxed{1} first, then \\boxed{\\frac{1}{2}}", "\\frac{1}{2}"),
        ("\\boxed{\\sqrt{x^{2}}}", "\\sqrt{x^{2}}"),
        ("\\boxed{ -3 } trailing", "-3"),
        ("\\fbox{7}", "7"),
        ("no box at all", None),
        ("\\boxed{5} then a truncated \\boxed{1", None),
        ("", None),
    ],
)
def test_last_boxed(text, expected):
    assert last_boxed(text) == expected


@pytest.mark.parametrize(
    "completion, gold, expected",
    [
        ("... \\boxed{16}", "16", True),
        ("... \\boxed{-4}", "-4", True),
        ("... \\boxed{+4}", 4, True),
        ("\\boxed{16} no wait \\boxed{15}", "16", False),
        ("... \\boxed{16.0}", "16", False),
        ("the answer is 16", "16", False),
        ("\\boxed{}", "0", False),
    ],
)
def test_grade_toy(completion, gold, expected):
    assert grade_toy(completion, gold) is expected
