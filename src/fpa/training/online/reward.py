"""The online methods' reward: the project's grader, exactly as it labels the offline data
(``fpa.samples.offline.grade_samples``: +1 correct, −1 incorrect), as a TRL reward function."""

from __future__ import annotations

from typing import Callable

from fpa.grading import get_grader
from fpa.samples.offline import grade_samples


def grader_reward(grader_name: str) -> Callable[..., list[float]]:
    """A TRL reward function ``(prompts, completions, answer, ...) -> rewards`` grading with ``grader_name``;
    ``answer`` is the dataset's gold column."""
    grader = get_grader(grader_name)

    def reward(prompts, completions, answer, **_) -> list[float]:
        samples = [{"completion": completion, "answer": gold} for completion, gold in zip(completions, answer)]
        return [sample["reward"] for sample in grade_samples(samples, grader)]

    reward.__name__ = f"{grader_name}_grader"
    return reward
