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

Each grader names, beside its grading function, the check of a gold answer it can read (``get_gold_check``:
toy an integer, code_tests a JSON test spec), which ``fpa validate-benchmark`` runs on a user's file
before any job samples it; the others take any non-empty gold (math's Math-Verify falls back to the
string; the code benchmarks' gold is a task id that their own task loader checks).
"""

from __future__ import annotations

import importlib
from typing import Callable, NamedTuple, Sequence

Pairs = Sequence[tuple[str, str]]
Verdicts = list[tuple[bool, str]]


class Grader(NamedTuple):
    grade: str  # "module:function" grading (completion, gold) pairs
    gold_check: str | None = None  # "module:function" raising a ValueError for a gold it cannot read


_GRADERS = {
    "toy": Grader("fpa.grading.answers:grade_toy_many", "fpa.grading.answers:check_toy_gold"),
    "math": Grader("fpa.grading.math:grade_math_many"),
    "mbppplus": Grader("fpa.grading.code:grade_mbppplus_many"),
    "humanevalplus": Grader("fpa.grading.code:grade_humanevalplus_many"),
    "bigcodebench": Grader("fpa.grading.code:grade_bigcodebench_many"),
    "livecodebench": Grader("fpa.grading.code:grade_livecodebench_many"),
    "code_tests": Grader("fpa.grading.code.tests:grade_tests_many", "fpa.grading.code.tests:parse_spec"),
}
GRADER_NAMES = tuple(_GRADERS)
#: Graders that execute code in the sandbox (evaluated by the ``evaluate_code`` rule).
CODE_GRADERS = ("mbppplus", "humanevalplus", "bigcodebench", "livecodebench", "code_tests")


def get_grader(name: str) -> Callable[[Pairs], Verdicts]:
    return _load(_entry(name).grade)


def get_gold_check(name: str) -> Callable[[str], object] | None:
    """The function that raises a ``ValueError`` for a gold answer grader ``name`` cannot read (None:
    any non-empty gold)."""
    check = _entry(name).gold_check
    return _load(check) if check else None


def grader_module(name: str) -> str:
    """The module a grader lives in (for code fingerprints), without importing it."""
    return _entry(name).grade.split(":")[0]


def _entry(name: str) -> Grader:
    if name not in _GRADERS:
        raise ValueError(f"grader: expected one of {sorted(_GRADERS)}, got {name!r}")
    return _GRADERS[name]


def _load(target: str) -> Callable:
    module, function = target.split(":")
    return getattr(importlib.import_module(module), function)
