"""The program a completion holds: its last fenced code block, and whether it can be written as UTF-8."""

from __future__ import annotations

import re

#: A program with a lone surrogate cannot be written as UTF-8; every upstream harness fails it too
#: (Python's ``compile`` refuses it), so it is graded here without a run instead of raising.
NOT_UTF8 = (False, "code_not_utf8")
_FENCE = re.compile(r"```(?:python|py|Python3?)?[ \t]*\n(.*?)```", re.DOTALL)


def extract_code(text: str) -> str:
    """The last fenced code block of a model answer, or the text itself when it has none."""
    blocks = _FENCE.findall(text)
    return blocks[-1] if blocks else text


def is_utf8(code: str) -> bool:
    try:
        code.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
