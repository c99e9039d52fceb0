"""Graders by name. A grader takes ``(completion, gold)`` pairs and returns, per pair,
whether it is correct and which rule decided. Training data and evaluation of a
benchmark family use the same grader.

- ``toy``: the integer in the last ``\\boxed{}`` equals the gold integer.
- ``math``: HF Math-Verify equivalence of the last ``\\boxed{}`` with the gold answer,
  in a process pool with a per-pair timeout (``fpa.grading.math.grade_many``).
- ``mbppplus``, ``humanevalplus``, ``bigcodebench``: the peers' own checks (evalplus,
  bigcodebench) executed inside the bubblewrap sandbox (``fpa.grading.code``); the gold is
  the task id.
"""

from __future__ import annotations

import importlib
from typing import Callable, Sequence

Pairs = Sequence[tuple[str, str]]
Verdicts = list[tuple[bool, str]]

_GRADERS = {
    "toy": "fpa.grading.answers:grade_toy_many",
    "math": "fpa.grading.math:grade_math_many",
    "mbppplus": "fpa.grading.code:grade_mbppplus_many",
    "humanevalplus": "fpa.grading.code:grade_humanevalplus_many",
    "bigcodebench": "fpa.grading.code:grade_bigcodebench_many",
}
GRADER_NAMES = tuple(_GRADERS)


def get_grader(name: str) -> Callable[[Pairs], Verdicts]:
    if name not in _GRADERS:
        raise ValueError(f"grader: expected one of {sorted(_GRADERS)}, got {name!r}")
    module, function = _GRADERS[name].split(":")
    return getattr(importlib.import_module(module), function)


def grader_module(name: str) -> str:
    """The module a grader lives in (for code fingerprints), without importing it."""
    if name not in _GRADERS:
        raise ValueError(f"grader: expected one of {sorted(_GRADERS)}, got {name!r}")
    return _GRADERS[name].split(":")[0]
