"""Boxed-answer extraction and the exact grader of the toy task.

``last_boxed`` is the one answer extractor of the project (the Math-Verify grader in
``grading/math.py`` uses it too). The toy answer is an integer, so toy grading is an
integer comparison and needs no symbolic parsing. The boxed integer is read as a ``Decimal``
(exact, in any script's decimal digits, and of any length: ``int()`` refuses a string of more
than 4,300 digits, which failed a whole benchmark's job).
"""

from __future__ import annotations

import re
from decimal import Decimal

from fpa.grading.grader import Grader

_BOX = re.compile(r"\\(?:boxed|fbox)\b")
_INTEGER = re.compile(r"[+-]?\d+")


def last_boxed(text: str) -> str | None:
    """Content of the last ``\\boxed{...}`` (nested braces, ``\\{`` skipped) or ``\\boxed x``.

    Returns None when there is no ``\\boxed`` or the last one is never closed
    (a truncated completion); an earlier box is not used then.
    """
    matches = list(_BOX.finditer(text))
    if not matches:
        return None
    start = matches[-1].end()
    while start < len(text) and text[start] == " ":
        start += 1
    if start == len(text):
        return None
    if text[start] != "{":  # "\boxed 2$." -> "2"
        token = re.match(r"[^\s$]+", text[start:])
        return token.group(0).rstrip(".,;") if token else None
    depth, index = 0, start
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return text[start + 1 : index].strip()
        index += 1
    return None


def grade_toy(completion: str, gold: str | int) -> bool:
    """True iff the last boxed answer is an integer equal to ``gold``; no box -> False."""
    answer = last_boxed(completion)
    if answer is None or not _INTEGER.fullmatch(answer.replace(" ", "")):
        return False
    return Decimal(answer.replace(" ", "")) == int(gold)


def check_toy_gold(gold: str) -> None:
    """A gold answer ``grade_toy`` can compare with: an integer; a ``ValueError`` saying so otherwise."""
    try:
        int(gold)
    except ValueError:
        raise ValueError(f"expected an integer (the toy grader compares the last \\boxed{{}} with it), "
                         f"got {gold!r}") from None


def grade_toy_many(pairs) -> list[tuple[bool, str]]:
    """``grade_toy`` over ``(completion, gold)`` pairs, with the deciding rule."""
    verdicts = []
    for completion, gold in pairs:
        if last_boxed(completion) is None:
            verdicts.append((False, "no_boxed"))
        else:
            verdicts.append((grade_toy(completion, gold), "integer"))
    return verdicts


GRADERS = (Grader("toy", grade_toy_many, gold_check=check_toy_gold, rewards=("toy",)),)
