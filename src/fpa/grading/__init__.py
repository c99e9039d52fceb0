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

Each grader module declares its ``GRADERS``, found by ``fpa.registry``; the graders
that run code (``code_graders``) also take ``workers=`` (threads, one sandboxed process each). A grader
that is a training reward names its ``dataset.source``s (``rewards``: toy, math12k, taco_apps), so that
each source's grader (``dataset_graders``) is read from the records.

Each grader record names, beside its grading function, the check of a gold answer it can read
(``get_gold_check``: toy an integer, code_tests a JSON test spec), which ``fpa validate-benchmark``
runs on a user's file before any job samples it; the others take any non-empty gold (math's
Math-Verify falls back to the string; the code benchmarks' gold is a task id that their own task
loader checks).
"""

from __future__ import annotations

from typing import Callable

from fpa.grading.grader import Grader, Pairs, Verdicts
from fpa.registry import Registry

GRADERS = Registry("grader", __name__, "GRADERS")
#: The module a grader lives in (for code fingerprints).
grader_module = GRADERS.module_of


def get_grader(name: str) -> Callable[[Pairs], Verdicts]:
    return GRADERS.lookup(name).grade_many


def get_gold_check(name: str) -> Callable[[str], object] | None:
    """The function that raises a ``ValueError`` for a gold answer grader ``name`` cannot read (None:
    any non-empty gold)."""
    return getattr(GRADERS.lookup(name), "gold_check", None)


def code_graders() -> list[str]:
    """The graders that execute code in the sandbox (evaluated by the ``evaluate_code`` rule)."""
    return [name for name, grader in GRADERS.items() if grader.runs_code]


def dataset_graders() -> dict[str, str]:
    """``dataset.source -> grader``: the training reward of each sampled training source, the source each
    grader's record names in its ``rewards``."""
    graders: dict[str, str] = {}
    for name, grader in GRADERS.items():
        for source in grader.rewards:
            if source in graders:
                raise ValueError(f"dataset source {source!r}: rewarded by grader {graders[source]!r} and by {name!r}")
            graders[source] = name
    return graders


__all__ = ["GRADERS", "Grader", "Pairs", "Verdicts", "code_graders", "dataset_graders", "get_gold_check", "get_grader",
           "grader_module"]
