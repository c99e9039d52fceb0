"""Graders by name. A grader takes ``(completion, gold)`` pairs and returns, per pair,
whether it is correct and which rule decided. Training data and evaluation of a
benchmark family use the same grader.

- ``toy``: the integer in the last ``\\boxed{}`` equals the gold integer.
- ``math``: HF Math-Verify equivalence of the last ``\\boxed{}`` with the gold answer,
  in a process pool with a per-pair timeout (``fpa.grading.math.grade_many``).
- ``mbppplus``, ``humanevalplus``, ``bigcodebench``, ``livecodebench``: the peers' own checks
  (evalplus, bigcodebench; LCB's re-stated) executed inside the bubblewrap sandbox
  (``fpa.grading.code``); the gold is the task id, the tasks come from ``data_path=``.
- ``code_tests``: the code training reward (TACO, APPS); the gold is the problem's JSON
  test spec, run with LCB's checker in the same sandbox (``fpa.grading.code.tests``).

Code graders (``CODE_GRADERS``) also take ``workers=`` (threads, one sandboxed process each).
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
    "livecodebench": "fpa.grading.code:grade_livecodebench_many",
    "code_tests": "fpa.grading.code.tests:grade_tests_many",
}
GRADER_NAMES = tuple(_GRADERS)
#: Graders that execute code in the sandbox (evaluated by the ``evaluate_code`` rule).
CODE_GRADERS = ("mbppplus", "humanevalplus", "bigcodebench", "livecodebench", "code_tests")


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
