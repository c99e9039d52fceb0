"""Accuracy metrics over a kept correctness matrix ``z`` of shape [N problems][n samples].

``z[i][j]`` is 1 when completion ``j`` of problem ``i`` is correct, else 0. Every
problem must have the same number of samples ``n`` (the paper's protocol).

Pass@1 (paper, appendix "Evaluation Protocol"): with a_j = (1/N) sum_i z_ij, the
Pass@1 of sample index j across the benchmark,

    Pass@1 = (1/n) sum_j a_j = (1/N) sum_i (1/n) sum_j z_ij,

the mean over samples, then over problems (the two orders agree for a full matrix).
Its standard error is taken over problems (``pass_at_1_stderr``).
"""

from __future__ import annotations

from collections import Counter
from math import comb
from typing import Hashable, Mapping, Sequence

import numpy as np


def _check_matrix(correct_matrix) -> np.ndarray:
    lengths = {len(row) for row in correct_matrix}
    if len(lengths) > 1:
        raise ValueError(f"correct_matrix: every problem needs the same n samples, got row lengths {sorted(lengths)}")
    z = np.asarray(correct_matrix)
    if z.ndim != 2 or z.shape[0] == 0 or z.shape[1] == 0:
        raise ValueError(
            f"correct_matrix: expected a non-empty [N problems][n samples] matrix, got shape {z.shape}"
        )
    if not np.isin(z, (0, 1)).all():
        raise ValueError(f"correct_matrix: expected only 0/1 entries, got {sorted(set(z.ravel().tolist()))}")
    return z.astype(np.int64)


def pass_at_1(correct_matrix: Sequence[Sequence[int]]) -> float:
    """Mean over samples, then over problems, of ``correct_matrix`` [N][n] (0/1)."""
    z = _check_matrix(correct_matrix)
    return float(z.mean(axis=1).mean())


def pass_at_1_stderr(correct_matrix: Sequence[Sequence[int]]) -> float:
    """Standard error of ``pass_at_1`` over problems: std(per-problem rate, ddof=1) / sqrt(N).

    The problems are the sampling unit (a benchmark is a draw of problems; the n samples of
    one problem are correlated), so this is the problem-clustered error, not the binomial
    error over all N*n samples, which understates it. NaN for a single problem.
    """
    z = _check_matrix(correct_matrix)
    if z.shape[0] < 2:
        return float("nan")
    return float(z.mean(axis=1).std(ddof=1) / np.sqrt(z.shape[0]))


def pass_at_k(correct_matrix: Sequence[Sequence[int]], k: int) -> float:
    """Unbiased pass@k (Chen et al. 2021, arXiv:2107.03374), averaged over problems.

    Per problem with ``c`` correct of ``n`` samples: 1 - C(n - c, k) / C(n, k).
    For k = 1 this equals ``pass_at_1``.
    """
    z = _check_matrix(correct_matrix)
    n = z.shape[1]
    if not 1 <= k <= n:
        raise ValueError(f"k: expected 1 <= k <= n = {n}, got {k}")
    per_problem = [1.0 - comb(n - int(c), k) / comb(n, k) for c in z.sum(axis=1)]
    return float(np.mean(per_problem))


def majority_vote(
    correct_matrix: Sequence[Sequence[int]], answers: Sequence[Sequence[Hashable | None]]
) -> float:
    """Accuracy of the most frequent answer per problem (maj@n), same [N][n] layout.

    Correctness alone cannot define a vote, so ``answers[i][j]`` gives the key of
    completion ``j``'s answer (e.g. the extracted ``\\boxed{}`` string; None when it
    has none). None does not vote; ties go to the answer that appears first; a
    problem with no answer at all counts as wrong. Completions with the same key
    must have the same correctness.
    """
    z = _check_matrix(correct_matrix)
    if len(answers) != z.shape[0] or any(len(row) != z.shape[1] for row in answers):
        raise ValueError(f"answers: expected the shape of correct_matrix {z.shape}")
    hits = 0
    for z_i, answers_i in zip(z, answers):
        votes = Counter(answer for answer in answers_i if answer is not None)
        if not votes:
            continue
        top = max(votes.values())
        winner = next(answer for answer in answers_i if votes.get(answer) == top)
        outcomes = {int(z_ij) for z_ij, answer in zip(z_i, answers_i) if answer == winner}
        if len(outcomes) != 1:
            raise ValueError(f"answers: key {winner!r} is graded both correct and wrong")
        hits += outcomes.pop()
    return hits / z.shape[0]


def evaluation_metric(record: Mapping, metric: str, where: str = "evaluation") -> float:
    """``metric`` ("pass@1" or "pass@<k>") of an evaluation file's ``record`` (``score_completions``):
    Pass@1 as recorded, pass@k from the kept correctness matrix ``correct``."""
    prefix, _, k = metric.partition("@")
    if prefix != "pass" or not k.isdigit():
        raise ValueError(f"{where}: metric: expected pass@<k>, got {metric!r}")
    if int(k) == 1:
        return float(record["pass_at_1"])
    if "correct" not in record:
        raise ValueError(f"{where}: no 'correct' matrix (fields: {sorted(record)}); {metric} needs it")
    return pass_at_k(record["correct"], int(k))
