"""Code fingerprints: what each rule's job actually depends on.

Snakemake's ``code`` trigger sees only a rule's shell text, not the package it
calls, and a git commit in ``params`` would re-run every job on every commit.
Instead a rule puts the fingerprint of the modules its job executes in
``params``: the sha256 of those modules' sources and, transitively, of every
``fpa`` module they import statically. Registry lookups (``fpa.objectives``
imports its method modules by name, at run time) are not followed, so editing
``objectives/dpo.py`` changes only the fingerprint of jobs that name ``dpo``.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
from functools import lru_cache
from pathlib import Path

PACKAGE = "fpa"


@lru_cache(maxsize=None)
def _source_file(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise ValueError(f"code fingerprint: module {module!r} not found")
    return Path(spec.origin)


def _imports(module: str, path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
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
    return {name for name in found if name == PACKAGE or name.startswith(PACKAGE + ".")}


def module_closure(*modules: str) -> list[str]:
    """``modules`` plus every ``fpa`` module they import, transitively, sorted."""
    seen: set[str] = set()
    stack = list(modules)
    while stack:
        module = stack.pop()
        if module in seen:
            continue
        try:
            path = _source_file(module)
        except (ValueError, ModuleNotFoundError):
            if module in modules:
                raise
            continue  # ``from fpa.x import name`` where name is not a module
        seen.add(module)
        stack.extend(_imports(module, path) - seen)
    return sorted(seen)


@lru_cache(maxsize=None)
def code_fingerprint(*modules: str) -> str:
    """sha256 over the sources of ``module_closure(*modules)``; 16 hex digits."""
    digest = hashlib.sha256()
    for module in module_closure(*modules):
        digest.update(module.encode() + b"\0" + _source_file(module).read_bytes() + b"\0")
    return digest.hexdigest()[:16]
