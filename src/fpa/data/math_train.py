"""The 12K MATH training split of Lightman et al. (2023, PRM800K), rebuilt from MATH.

12,000 = all 7,500 MATH train problems + the 4,500 MATH test problems whose
``unique_id`` is not in MATH500 (recipe: shared/data/MANIFEST.md, "Derived splits").
Answers are the last ``\\boxed{}`` of each solution. Records keep their
``unique_id`` as id and ``source`` ``math_train`` or ``math_test``.

MATH-Perturb is test-only (its README forbids training on it), so
``guard_training_set`` refuses any record whose source is a MATH-P benchmark or
whose problem text equals a MATH-P problem text. ``build_math_train`` always
calls it; pass the MATH-P files to enable the text check.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Sequence

from fpa.data.benchmarks import MathProblem, load_math, load_math500, load_math_perturb

EXPECTED_SIZE = 12_000
FORBIDDEN_SOURCE_PREFIX = "math_perturb"


def _text_key(problem: str) -> str:
    return " ".join(problem.split())


def guard_training_set(
    problems: Iterable[MathProblem], forbidden: Iterable[MathProblem] = ()
) -> None:
    """Raise ``ValueError`` if a MATH-P record, or a MATH-P problem text, is in ``problems``."""
    forbidden_texts = {_text_key(problem.problem): problem.id for problem in forbidden}
    for problem in problems:
        if problem.source.startswith(FORBIDDEN_SOURCE_PREFIX):
            raise ValueError(
                f"training set: {problem.id}: source {problem.source!r} is test-only (MATH-Perturb)"
            )
        clash = forbidden_texts.get(_text_key(problem.problem))
        if clash is not None:
            raise ValueError(
                f"training set: {problem.id} ({problem.source}): problem text equals MATH-P {clash}"
            )


def build_math_train(
    train_path: str | os.PathLike,
    test_path: str | os.PathLike,
    math500_path: str | os.PathLike,
    math_perturb_paths: Sequence[str | os.PathLike] = (),
    expected_size: int | None = EXPECTED_SIZE,
) -> list[MathProblem]:
    """MATH train + (MATH test minus MATH500), guarded against MATH-P.

    With ``expected_size`` (the default, for the full files) MATH500 must be a
    subset of MATH test and the result must have exactly that many problems;
    pass None for samples such as ``tiny/``.
    """
    train = load_math(train_path, source="math_train")
    test = load_math(test_path, source="math_test")
    held_out = {problem.id for problem in load_math500(math500_path)}
    if expected_size is not None:
        absent = sorted(held_out - {problem.id for problem in test})
        if absent:
            raise ValueError(
                f"{math500_path}: {len(absent)} MATH500 unique_ids not in {test_path}, e.g. {absent[:3]}"
            )
    problems = train + [problem for problem in test if problem.id not in held_out]
    ids = [problem.id for problem in problems]
    if len(set(ids)) != len(ids):
        raise ValueError(f"training set: duplicate unique_ids across {train_path} and {test_path}")
    perturbed = [
        problem
        for path in math_perturb_paths
        for problem in load_math_perturb(path, source=Path(path).stem)
    ]
    guard_training_set(problems, perturbed)
    if expected_size is not None and len(problems) != expected_size:
        raise ValueError(
            f"training set: expected {expected_size} problems "
            f"(MATH train + MATH test - MATH500), got {len(problems)}"
        )
    return problems
