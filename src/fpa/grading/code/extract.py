"""The program a completion holds: its last fenced code block, whether it defines a function (read by
parsing it, not by searching its text), and whether it can be written as UTF-8."""

from __future__ import annotations

import ast
import functools
import re
import sys

#: A program with a lone surrogate cannot be written as UTF-8; every upstream harness fails it too
#: (Python's ``compile`` refuses it), so it is graded here without a run instead of raising.
NOT_UTF8 = (False, "code_not_utf8")
# a fence that opens a Python block: ```, ```python, ```py, ```python3, ```py3 (any case), with or without
# attributes after the language (```python title="a.py")
_FENCE = re.compile(r"```(?:(?:python|py)3?)?(?:[ \t][^\n]*)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)


def grader_error(error: Exception) -> tuple[bool, str]:
    """The verdict of a record its grader could not grade: wrong, with the reason, so that one bad record
    costs that record only, never its job or the records beside it. A sandbox that cannot run here is no
    record's fault: that error is raised again."""
    from fpa.sandbox import SandboxUnavailable

    if isinstance(error, SandboxUnavailable):
        raise error
    return False, f"grader_error: {type(error).__name__}: {str(error)[:300]}"


def extract_code(text: str) -> str:
    """The last fenced code block of a model answer, or the text itself when it has none."""
    blocks = _FENCE.findall(text)
    return blocks[-1] if blocks else text


def defines_function(code: str, name: str, *, in_class: str | None = None) -> bool:
    """Whether ``code`` parses and defines ``name`` as a function at its top level, or with ``in_class``
    also as a method of the top-level class of that name."""
    tree = _parsed(code)
    if tree is None:
        return False
    classes = [node.body for node in tree.body if isinstance(node, ast.ClassDef) and node.name == in_class]
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name
               for body in [tree.body, *classes] for node in body)


def imports_outside_stdlib(code: str) -> bool:
    """Whether ``code`` has an import statement (anywhere) of a module outside the standard library; a
    program that does not compile imports nothing."""
    tree = _parsed(code)
    if tree is None:
        return False
    names = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    names += [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module and not node.level]
    return any(name.partition(".")[0] not in sys.stdlib_module_names for name in names)


def preloaded(modules: tuple[str, ...], programs: list[str]) -> tuple[str, ...]:
    """What a harness's evaluating process has imported before its guard (``modules``), to import likewise
    before the guard of a run whose programs import anything outside the standard library: under the guard
    (``os.putenv`` None) their own import of numpy or pandas fails, where the harness's finds it done."""
    return tuple(modules) if any(map(imports_outside_stdlib, programs)) else ()


@functools.lru_cache(maxsize=64)
def _parsed(code: str) -> ast.Module | None:
    """``code``'s syntax tree, parsed once for the questions asked of one program (None: it does not parse).
    The tree is only read."""
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def is_utf8(code: str) -> bool:
    try:
        code.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
