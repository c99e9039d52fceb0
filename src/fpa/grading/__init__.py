"""Graders by name: ``grader(completion, gold) -> bool``. Training data and evaluation
of a benchmark use the same grader."""

from __future__ import annotations

import importlib
from typing import Callable

_GRADERS = {"toy": ("fpa.grading.answers", "grade_toy")}


def get_grader(name: str) -> Callable[[str, str], bool]:
    if name not in _GRADERS:
        raise ValueError(f"grader: expected one of {sorted(_GRADERS)}, got {name!r}")
    module, function = _GRADERS[name]
    return getattr(importlib.import_module(module), function)


def grader_module(name: str) -> str:
    return get_grader(name).__module__
