"""The stdout check of LiveCodeBench, rule for rule (``livecodebench.evaluation.testing_util.grade_stdio``
of ``nvidia-livecodebench==26.3``); LiveCodeBench's grader and the ``code_tests`` reward both use it.

1. Each output is stripped, split at ``"\\n"`` only (a ``"\\r"`` inside a line stays in it), and each
   line is stripped. Blank lines inside count. Different line counts fail.
2. Line by line: equal text passes.
3. Otherwise every whitespace-separated token of both lines must parse as a ``Decimal``, and the
   two lists must be equal. The parse is exact and has no length limit: ``10**19`` differs from
   ``10**19 + 1`` and ``1.0000000000000001`` from ``1``, while ``1.50`` = ``1.5``, ``1e5`` = ``100000``,
   ``-0`` = ``0``, ``+1`` = ``1`` and ``١٢`` (Arabic-Indic digits) = ``12``. A token that does not parse
   fails the line. ``NaN`` equals nothing (the same text still passes by rule 2). A signalling NaN
   makes LiveCodeBench's comparison raise, which its ``run_test`` reports as an error: a failure in
   both.

Floats are not used: they pass ``10000000000000000000`` for ``10000000000000000001``.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation


def stripped_lines(text: str) -> list[str]:
    return [line.strip() for line in text.strip().split("\n")]


def _decimals(line: str) -> list[Decimal] | None:
    """The line's tokens as decimals, or None when one does not parse (LCB: ``convert_line_to_decimals``)."""
    try:
        return [Decimal(token) for token in line.split()]
    except (ArithmeticError, ValueError):  # decimal.InvalidOperation is an ArithmeticError
        return None


def line_matches(got: str, want: str) -> bool:
    """Two stripped lines: equal, or the same list of decimals."""
    if got == want:
        return True
    got_decimals, want_decimals = _decimals(got), _decimals(want)
    if got_decimals is None or want_decimals is None:
        return False
    try:
        return got_decimals == want_decimals
    except InvalidOperation:  # a signalling NaN
        return False


def stdout_matches(got: str, want: str) -> bool:
    """A program's stdout ``got`` passes the expected output ``want``."""
    got_lines, want_lines = stripped_lines(got), stripped_lines(want)
    return len(got_lines) == len(want_lines) and all(map(line_matches, got_lines, want_lines))
