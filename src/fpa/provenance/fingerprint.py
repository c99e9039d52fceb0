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
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
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
    tree = ast.parse(_source(module), filename=str(path))
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
    """sha256 over the sources of ``module_closure(*modules)``; 16 hex digits."""
    digest = hashlib.sha256()
    for module in module_closure(*modules):
        digest.update(module.encode() + b"\0" + _source(module) + b"\0")
    return digest.hexdigest()[:16]
