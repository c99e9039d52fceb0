"""The text a model reads or is graded against, checked where a benchmark is prepared (issue 42).

A problem's text is tokenized hours after it is read: a NUL or another control character, or a
lone surrogate (a ``\\ud800`` escape without its pair), would fail there or silently change what
the model sees; two problems that are the same text after Unicode NFC normalisation count one
problem twice in Pass@1. Each is refused here with one line naming the file, the record and the
field. Allowed are the characters text holds on purpose: ``\\t``, ``\\n`` and ``\\r`` (code
benchmarks indent with tabs; a few upstream files end lines with ``\\r\\n``).

A benchmark that really repeats a problem (BigCodeBench's tasks 1120 and 1121 share one prompt)
declares it in its catalog entry (``duplicate_problems: 1``): the count is checked, not ignored.
"""

from __future__ import annotations

import os
import re
import unicodedata
from typing import Sequence

#: the line breaks and tab a text may hold; every other C0 control, DEL and the C1 controls are refused
ALLOWED_CONTROLS = "\t\n\r"
_REFUSED = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def check_text(text: str, where: str, field: str) -> None:
    """``text`` holds no control character but ``ALLOWED_CONTROLS`` and no lone surrogate."""
    found = _REFUSED.search(text)
    if found is None:
        return
    char = found.group()
    kind = "a lone surrogate" if "\ud800" <= char <= "\udfff" else "a control character"
    raise ValueError(f"{where}: field {field!r}: {kind} U+{ord(char):04X} at character {found.start() + 1} "
                     f"({text[max(found.start() - 20, 0):found.start()]!r} before it); expected text with no control "
                     f"characters but \\t, \\n and \\r, and no lone surrogate")


def nfc_duplicates(texts: Sequence[str]) -> list[tuple[int, int]]:
    """``(index, index of its first occurrence)`` of each text equal to an earlier one after NFC."""
    first: dict[str, int] = {}
    repeats = []
    for index, text in enumerate(texts):
        key = unicodedata.normalize("NFC", text)
        if key in first:
            repeats.append((index, first[key]))
        else:
            first[key] = index
    return repeats


def check_duplicates(path: str | os.PathLike, texts: Sequence[str], numbers: Sequence[int], field: str,
                     declared: int = 0, unit: str = "record") -> None:
    """``texts`` (of the records ``numbers``, e.g. their lines) repeat no text after NFC, but for
    ``declared`` repeats that a catalog entry says the upstream file has (``duplicate_problems``)."""
    repeats = nfc_duplicates(texts)
    if len(repeats) == declared:
        return
    if not repeats:
        raise ValueError(f"{path}: field {field!r}: expected {declared} repeated problems (duplicate_problems), "
                         "got none")
    index, first = repeats[0]
    raise ValueError(f"{path}: {unit} {numbers[index]}: field {field!r}: the same text as {unit} {numbers[first]} "
                     f"after Unicode NFC normalisation ({len(repeats)} repeats, {declared} declared by "
                     "duplicate_problems); expected each problem once (a repeat counts twice in Pass@1)")
