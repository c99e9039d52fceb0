"""EvalPlus's verdict on one split, decided on the host from the outputs a candidate returned.

``evalplus.eval.unsafe_execute`` runs a candidate and compares each output with the
expected one in the same process, so a candidate could fake the comparison (an
``__eq__`` that is always true, or ``expected`` read from the caller's frame). Here the
two halves are apart: the sandbox runs the candidate and sends each output back as data
(``fpa.grading.code.values``), and ``split_status`` compares them on the host with
EvalPlus 0.3.1's own rules, re-stated line for line from ``unsafe_execute`` and
``untrusted_check`` (``fast_check=True``), with its helpers imported: ``is_floats``, the
special oracles (``_poly``, ``_surface_Area``, ``_digit_distance_nums``,
``MBPP_OUTPUT_SET_EQ_TASKS``, ``MBPP_OUTPUT_NOT_NONE_TASKS``), ``atol`` (raised to 1e-6 for
the rest of the split once an expected output is a float, as upstream) and
``np.allclose(rtol=1e-07)``. The time limits are ``untrusted_check``'s.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from evalplus.config import DEFAULT_GT_TIME_LIMIT_FACTOR, DEFAULT_MIN_TIME_LIMIT
from evalplus.eval import FAIL, PASS, TIMEOUT, is_floats
from evalplus.eval._special_oracle import (
    MBPP_OUTPUT_NOT_NONE_TASKS,
    MBPP_OUTPUT_SET_EQ_TASKS,
    _digit_distance_nums,
    _poly,
    _surface_Area,
)

from fpa.grading.code.values import Opaque, loads

TIMEOUT_PER_TASK_S = 60  # untrusted_check's default EVALPLUS_TIMEOUT_PER_TASK


def time_limits(ref_time: list[float]) -> list[float]:
    """Per input: ``max(DEFAULT_MIN_TIME_LIMIT, DEFAULT_GT_TIME_LIMIT_FACTOR * reference time)``."""
    return [max(DEFAULT_MIN_TIME_LIMIT, DEFAULT_GT_TIME_LIMIT_FACTOR * t) for t in ref_time]


def process_deadline_s(limits: list[float]) -> float:
    """``untrusted_check``: ``timeout = min(60, sum of the limits) + 1``, then ``join(timeout + 1)``."""
    return min(TIMEOUT_PER_TASK_S, sum(limits)) + 1 + 1


@dataclass(frozen=True)
class Expected:
    """The canonical solution's outputs on one split: the lines the gold run sent (a candidate's
    process sends its outputs as the same ``["value", ...]`` lines), their values, its reference times."""

    lines: list[str]
    outputs: list
    ref_time: list[float]


def opaque_fails(dataset: str, entry_point: str) -> bool:
    """Whether an output that could not cross (``Opaque``) fails every comparison of this task, as
    it does but for the oracles that pass any object: ``are_equivalent`` (any output) and
    ``MBPP_OUTPUT_NOT_NONE_TASKS`` (any output but None). The candidate then stops there, as
    ``fast_check`` stops at a failure, without knowing any expected output."""
    return not (dataset == "mbpp" and (entry_point == "are_equivalent" or entry_point in MBPP_OUTPUT_NOT_NONE_TASKS))


def split_status(dataset: str, entry_point: str, inputs: list, expected: Expected, atol: float,
                 lines: list[str], end: str) -> str:  # fmt: skip
    """``untrusted_check``'s status ("pass", "fail", "timeout") for one split, from all the lines
    the candidate's process sent and ``end``, how that process ended (``SplitCheck``)."""
    check = SplitCheck(dataset, entry_point, inputs, expected, atol)
    for line in lines:
        if check.add(line):
            break
    return check.status(end)


class SplitCheck:
    """``untrusted_check``'s comparison of one split, one line at a time as the candidate's
    process sends them (``["value", v]``, ``["opaque", type]`` for an output that could not
    cross, then ``["done"]`` or ``["raised", type]``). ``add`` says when a line has failed the
    split, so that the candidate can be stopped there as ``fast_check`` stops; ``status`` is
    the verdict once the process has ended. A line the harness cannot have written fails the split."""

    def __init__(self, dataset: str, entry_point: str, inputs: list, expected: Expected, atol: float) -> None:
        self.dataset, self.entry_point, self.inputs, self.expected, self.atol = dataset, entry_point, inputs, expected, atol
        self.sent, self.done, self.stop, self.failed = 0, 0, None, False

    def add(self, line: str) -> bool:
        """Take the next line; True when it fails the split (later lines change nothing)."""
        if self.failed or self.stop is not None:
            return False
        index, self.sent = self.sent, self.sent + 1
        try:
            kind, out = _message(line, self.expected, index)
        except ValueError:
            return self._fail()
        if kind != "value":
            self.stop = kind  # the process ends after this line
            return False
        if index >= len(self.inputs):
            return False
        try:
            verdict, self.atol = _compare(self.dataset, self.entry_point, self.inputs[index], out,
                                          self.expected.outputs[index], self.atol)  # fmt: skip
        except Exception:  # unsafe_execute: any exception while comparing fails the input
            return self._fail()
        if verdict is False:
            return self._fail()
        self.done += verdict is True  # None: find_zero's oracle, which 0.3.1 never counts as done
        return False

    def _fail(self) -> bool:
        self.failed = True
        return True

    def status(self, end: str) -> str:
        """The split's status given ``end``, how the process ended (``fpa.grading.code.monitor``)."""
        if end == "too_large" or self.failed or self.stop == "raised":
            return FAIL
        if self.stop != "done":  # killed at the deadline or died: untrusted_check's unknown status
            return TIMEOUT
        return PASS if self.done == len(self.inputs) else FAIL


def _message(line: str, expected: Expected, index: int) -> tuple[str, object]:
    """(kind, output). An output line equal to the canonical's own, without a NaN (which equals
    nothing, itself included), is the same value: the canonical's, not parsed again."""
    if index < len(expected.lines) and line == expected.lines[index] and "NaN" not in line:
        return "value", expected.outputs[index]
    message = loads(line)
    kind = message[0] if isinstance(message, list) and message else None
    if kind in ("value", "opaque") and len(message) == 2:
        return "value", message[1] if kind == "value" else Opaque(str(message[1]))
    if kind in ("done", "raised"):
        return kind, None
    raise ValueError(f"not an output message: {line[:80]!r}")


def _compare(dataset: str, entry_point: str, inp, out, exp, atol: float) -> tuple[bool | None, float]:
    """One input of ``unsafe_execute``'s loop: (matches, the ``atol`` for the next inputs).
    Matches is None where 0.3.1 ``continue``s past its counter (HumanEval's ``find_zero``)."""
    exact_match = out == exp
    if dataset == "mbpp":
        if "are_equivalent" == entry_point:  # Mbpp/164 special oracle
            exact_match = exact_match or True
        elif "sum_div" == entry_point:  # Mbpp/295 special oracle
            exact_match = exact_match or out == 0
        elif "surface_Area" == entry_point:  # Mbpp/581 special oracle
            exact_match = exact_match or abs(out - _surface_Area(*inp)) <= atol
        elif "digit_distance_nums" == entry_point:  # Mbpp/558 special oracle
            exact_match = exact_match or out == _digit_distance_nums(*inp)
        elif entry_point in MBPP_OUTPUT_SET_EQ_TASKS:
            exact_match = set(out) == set(exp)
        elif entry_point in MBPP_OUTPUT_NOT_NONE_TASKS:  # exp is True if not None, False if None
            exact_match = out == exp if isinstance(out, bool) else exp == (out is not None)
    if dataset == "humaneval" and "find_zero" == entry_point:
        return (None if abs(_poly(*inp, out)) <= atol else False), atol
    if atol == 0 and is_floats(exp):
        atol = 1e-6  # enforce atol for float comparison
    if not exact_match and atol != 0:  # explicitly rtol=1e-07, np.testing.assert_allclose's default
        if type(out) != type(exp) or (isinstance(exp, (list, tuple)) and len(out) != len(exp)):
            return False, atol
        return bool(np.allclose(out, exp, rtol=1e-07, atol=atol)), atol
    return bool(exact_match), atol
