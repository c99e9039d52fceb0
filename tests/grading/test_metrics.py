"""fpa.evaluation.metrics with hand-computed values (kept here: the brief owns tests/grading)."""

import pytest

import math

from fpa.evaluation.metrics import majority_vote, pass_at_1, pass_at_1_stderr, pass_at_k

# 3 problems x 4 samples; per-problem rates 3/4, 0, 1/2.
Z = [[1, 0, 1, 1], [0, 0, 0, 0], [1, 1, 0, 0]]


def test_pass_at_1_is_mean_over_samples_then_problems():
    assert pass_at_1(Z) == pytest.approx((0.75 + 0.0 + 0.5) / 3)  # 0.41666...
    # Same as the mean of per-sample accuracies a_j = (2/3, 1/3, 1/3, 1/3).
    assert pass_at_1(Z) == pytest.approx((2 / 3 + 1 / 3 + 1 / 3 + 1 / 3) / 4)
    assert pass_at_1([[1]]) == 1.0


def test_pass_at_1_stderr_is_taken_over_problems():
    # per-problem rates 0.75, 0, 0.5: mean 5/12, sample variance ((1/3)^2 + (5/12)^2 + (1/12)^2) / 2
    variance = ((0.75 - 5 / 12) ** 2 + (5 / 12) ** 2 + (0.5 - 5 / 12) ** 2) / 2
    assert pass_at_1_stderr(Z) == pytest.approx(math.sqrt(variance / 3))
    # one sample per problem: the binomial error with N - 1 in the denominator
    assert pass_at_1_stderr([[1], [0], [1], [1]]) == pytest.approx(math.sqrt(0.75 * 0.25 * 4 / 3 / 4))
    assert pass_at_1_stderr([[1, 0] * 4, [1, 0] * 4]) == 0.0  # problems agree: no error from them
    assert math.isnan(pass_at_1_stderr([[1, 0]]))


def test_pass_at_k_unbiased_estimator():
    # n=4, k=2: problem 1 (c=3): 1 - C(1,2)/C(4,2) = 1; problem 2 (c=0): 0;
    # problem 3 (c=2): 1 - C(2,2)/C(4,2) = 1 - 1/6 = 5/6.
    assert pass_at_k(Z, 2) == pytest.approx((1 + 0 + 5 / 6) / 3)
    assert pass_at_k(Z, 1) == pytest.approx(pass_at_1(Z))
    assert pass_at_k(Z, 4) == pytest.approx(2 / 3)  # any correct sample


def test_majority_vote():
    answers = [["5", "4", "5", "5"], ["1", "2", None, "2"], ["7", "7", "8", "8"]]
    # p1: "5" wins (correct); p2: "2" wins (wrong); p3: tie 7/8 -> "7" appears first (correct).
    assert majority_vote(Z, answers) == pytest.approx(2 / 3)
    assert majority_vote([[0, 0]], [[None, None]]) == 0.0


@pytest.mark.parametrize(
    "matrix, match",
    [([], "non-empty"), ([[1, 0], [1]], "matrix"), ([[1, 2]], "0/1"), ([[]], "non-empty")],
)
def test_bad_matrices(matrix, match):
    with pytest.raises(ValueError, match=match):
        pass_at_1(matrix)


def test_bad_k_and_inconsistent_votes():
    with pytest.raises(ValueError, match="1 <= k <= n = 4, got 5"):
        pass_at_k(Z, 5)
    with pytest.raises(ValueError, match="graded both correct and wrong"):
        majority_vote([[1, 0]], [["a", "a"]])
    with pytest.raises(ValueError, match="shape"):
        majority_vote(Z, [["1"]])
