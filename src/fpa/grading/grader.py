"""What a grader is: the record a grader module registers in its ``GRADERS`` (``fpa.grading``).
A code benchmark graded by its own harness registers a ``fpa.grading.code.bench.CodeBench``, which also
owns the benchmark's prompts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

Pairs = Sequence[tuple[str, str]]
Verdicts = list[tuple[bool, str]]


@dataclass(frozen=True)
class Grader:
    """A grader by name (``benchmarks.<b>.grader`` in config).

    Attributes:
      name: registry key.
      grade_many: ``(completion, gold)`` pairs -> ``(correct, rule)`` per pair, in order.
      runs_code: it runs the completion's program in the sandbox (it then takes ``workers=``).
      gold_check: raises a ``ValueError`` for a gold answer the grader cannot read; None: any
        non-empty gold.
      rewards: the ``dataset.source``s whose sampled training problems it grades: the training reward of
        their offline datasets, their online runs and their validation split (``fpa.grading.dataset_graders``).
    """

    name: str
    grade_many: Callable[..., Verdicts]
    runs_code: bool = False
    gold_check: Callable[[str], object] | None = None
    rewards: tuple[str, ...] = ()
