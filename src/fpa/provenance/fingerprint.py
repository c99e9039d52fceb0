"""Code fingerprints: what each rule's job actually depends on.

Snakemake's ``code`` trigger sees only a rule's shell text, not the package it
calls, and a git commit in ``params`` would re-run every job on every commit.
Instead a rule puts the fingerprint of the modules its job executes in
``params``: the sha256 of those modules' sources and, transitively, of every
``fpa`` module they import statically. Registry lookups (``fpa.objectives``
imports its method modules by name, at run time) are not followed, so editing
``objectives/dpo.py`` changes only the fingerprint of jobs that name ``dpo``, and adding a member
module changes none (``fpa.registry`` finds its members; no listing is edited).

A member from the user's own package (an entry point, ``fpa.registry``) is fingerprinted alike:
its source and, transitively, the modules of its own top-level package and of ``fpa`` it imports.

What is hashed is a module's *code*: its source without comments, docstrings, blank lines and trailing
spaces (``code_text``), so that documenting a module every job imports re-runs no job. It is cut from the
source text by the positions the parser gives, not rebuilt from the syntax tree, whose
printed form changes between Python versions: the fingerprint must not change with the Python that
Snakemake parses the workflow in.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import io
import tokenize
from functools import lru_cache
from pathlib import Path

PACKAGE = "fpa"
#: The directory of the ``fpa`` package this module belongs to (what ``import fpa`` loads).
_PACKAGE_DIR = Path(__file__).resolve().parents[1]


@lru_cache(maxsize=None)
def _source_file(module: str) -> Path:
    """The source file of an ``fpa`` module, found without importing it or its package.

    (``importlib.util.find_spec`` would import every parent package, and with them
    torch, transformers, ... : seconds at each Snakemake parse.)
    """
    head, *rest = module.split(".")
    if head == PACKAGE:
        base = _PACKAGE_DIR.joinpath(*rest)
        for candidate in ([base.with_suffix(".py")] if rest else []) + [base / "__init__.py"]:
            if candidate.is_file():
                return candidate
        raise ValueError(f"code fingerprint: module {module!r} not found in {_PACKAGE_DIR}")
    return _outside_source_file(module)


def _outside_source_file(module: str) -> Path:
    """The source file of a module of another package (a registry member from the user's package):
    found by the import system, which imports its parent packages (the user's, not ``fpa``'s)."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not (spec.origin or "").endswith(".py"):
        raise ValueError(f"code fingerprint: module {module!r} has no Python source on the import path")
    return Path(spec.origin)


@lru_cache(maxsize=None)
def _source(module: str) -> bytes:
    return _source_file(module).read_bytes()


def _text(source: bytes) -> str:
    """``source`` decoded as Python reads it (a BOM or coding line), its line ends the parser's: a checkout
    with CRLF is the same code."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
    return source.decode(encoding).replace("\r\n", "\n").replace("\r", "\n")


@lru_cache(maxsize=None)
def _parsed(module: str) -> tuple[str, ast.Module]:
    """The text of ``module`` and its syntax tree, parsed once for its imports and its code."""
    text = _text(_source(module))
    return text, ast.parse(text, filename=str(_source_file(module)))


def _docstrings(tree: ast.Module):
    """The string-literal statements that open a module, class or function body: what Python keeps as
    ``__doc__`` and runs as nothing else."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                yield first


def _span(node: ast.AST, lines: list[str]) -> list[tuple[int, int, int]]:
    """(line index, first column, end column) of each line ``node`` covers, in characters (the parser
    counts columns in UTF-8 bytes)."""
    first, last = node.lineno - 1, node.end_lineno - 1
    return [(index, len(lines[index].encode()[:node.col_offset].decode()) if index == first else 0,
             len(lines[index].encode()[:node.end_col_offset].decode()) if index == last else len(lines[index]))
            for index in range(first, last + 1)]


def _comment_start(line: str, strings: list[tuple[int, int]]) -> int | None:
    """Where the comment of ``line`` starts: its first ``#`` outside the string literals on it, or None."""
    column = line.find("#")
    while column >= 0:
        if not any(begin <= column < end for begin, end in strings):
            return column
        column = line.find("#", column + 1)
    return None


def code_text(source: bytes) -> str:
    """``source`` without its comments, docstrings, blank lines and trailing spaces; code otherwise as written."""
    text = _text(source)
    return _code_text(text, ast.parse(text))


def _code_text(text: str, tree: ast.Module) -> str:
    """``code_text`` of ``text``, whose tree is ``tree``. Each docstring and comment is blanked where the
    parser places it (a ``#`` outside every string literal starts a comment), so the text kept is the
    source's own (a statement after a docstring on its line, ``; x = 1``, stays). A line that ends inside a
    string literal is kept as it is, blank or not: its spaces and line break are the string's."""
    lines = text.split("\n")
    docstrings = {id(docstring.value) for docstring in _docstrings(tree)}
    strings: dict[int, list[tuple[int, int]]] = {}
    inside_string: set[int] = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.JoinedStr)
                or isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes))):
            continue
        span = _span(node, lines)
        for index, begin, end in span:
            if id(node) in docstrings:
                lines[index] = lines[index][:begin] + " " * (end - begin) + lines[index][end:]
            else:
                strings.setdefault(index, []).append((begin, end))
        if id(node) not in docstrings:
            inside_string.update(index for index, _, _ in span[:-1])
    for index, line in enumerate(lines):
        if "#" in line and (column := _comment_start(line, strings.get(index, []))) is not None:
            lines[index] = line[:column]
    return "".join((line if index in inside_string else line.rstrip()) + "\n" for index, line in enumerate(lines)
                   if index in inside_string or line.strip())


@lru_cache(maxsize=None)
def _code(module: str) -> str:
    return _code_text(*_parsed(module))


def _import_statements(body: list[ast.stmt]):
    """Every import statement in ``body``, nested blocks included (functions, classes, if, try, ...).

    Imports are statements, so only statement lists are visited, not expressions:
    the same result as ``ast.walk`` at a fraction of the nodes.
    """
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(node, field, None)
            if isinstance(block, list):
                yield from _import_statements(block)


@lru_cache(maxsize=None)
def _imports(module: str) -> frozenset[str]:
    """The ``fpa`` modules, and those of its own top-level package, that ``module`` imports statically
    (anywhere in its source)."""
    path = _source_file(module)
    tree = _parsed(module)[1]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in _import_statements(tree.body):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            found.add(base)
            # ``from fpa.x import y`` may import the submodule fpa.x.y
            found.update(f"{base}.{alias.name}" for alias in node.names)
    followed = {PACKAGE, module.split(".")[0]}
    return frozenset(name for name in found if name.split(".")[0] in followed)


def module_closure(*modules: str) -> list[str]:
    """``modules`` plus every ``fpa`` module they import, transitively, sorted."""
    seen: set[str] = set()
    stack = list(modules)
    while stack:
        module = stack.pop()
        if module in seen:
            continue
        try:
            _source_file(module)
        except ValueError:
            if module in modules:
                raise
            continue  # ``from fpa.x import name`` where name is not a module
        seen.add(module)
        stack.extend(_imports(module) - seen)
    return sorted(seen)


@lru_cache(maxsize=None)
def code_fingerprint(*modules: str) -> str:
    """sha256 over the code (``code_text``) of ``module_closure(*modules)``; 16 hex digits."""
    digest = hashlib.sha256()
    for module in module_closure(*modules):
        digest.update(module.encode() + b"\0" + _code(module).encode() + b"\0")
    return digest.hexdigest()[:16]
