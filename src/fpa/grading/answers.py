"""Boxed-answer extraction and the exact grader of the toy task.

Independent of the Math-Verify grader (``grading/math.py``): the toy answer is
an integer, so grading is an integer comparison and needs no symbolic parsing.
"""

from __future__ import annotations

import re

_BOX = re.compile(r"\\(?:boxed|fbox)\s*\{")
_INTEGER = re.compile(r"[+-]?\d+")


def extract_boxed(text: str) -> str | None:
    """Content of the last ``\\boxed{...}`` (or ``\\fbox{...}``), nested braces included.

    ``"\\boxed{1} then \\boxed{\\frac{1}{2}}"`` -> ``"\\frac{1}{2}"``. No box -> ``None``;
    an unclosed last box (a truncated completion) -> ``None`` too, since the final
    answer was never finished. The content is stripped of surrounding spaces.
    """
    matches = list(_BOX.finditer(text))
    if not matches:
        return None
    start = matches[-1].end()
    depth = 1
    for i in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[start:i].strip()
    return None


def grade_toy(completion: str, gold: str | int) -> bool:
    """True iff the last boxed answer is an integer equal to ``gold``; no box -> False."""
    answer = extract_boxed(completion)
    if answer is None or not _INTEGER.fullmatch(answer.replace(" ", "")):
        return False
    return int(answer.replace(" ", "")) == int(gold)


def grade_toy_many(pairs) -> list[tuple[bool, str]]:
    """``grade_toy`` over ``(completion, gold)`` pairs, with the deciding rule."""
    verdicts = []
    for completion, gold in pairs:
        if extract_boxed(completion) is None:
            verdicts.append((False, "no_boxed"))
        else:
            verdicts.append((grade_toy(completion, gold), "integer"))
    return verdicts
