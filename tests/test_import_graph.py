"""fpa's import graph, deferred imports (in functions) included: its layers (import-linter's
contracts in pyproject.toml, ``lint-imports``), no circle among its modules (grimp's graph, the
one import-linter reads: a circle hides behind imports deferred into functions until one of them
runs first) and no two of its packages importing each other (``fpa.memory`` included, whose modules
the contracts place in different layers)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]


def lint_imports(source: Path) -> subprocess.CompletedProcess:
    """``lint-imports`` with the project's contracts, on the ``fpa`` package under ``source``."""
    env = {**os.environ, "PYTHONPATH": str(source)}
    return subprocess.run([Path(sys.executable).parent / "lint-imports", "--no-cache", "--no-logo",
                           str(ROOT / "pyproject.toml")], capture_output=True, text=True, env=env, cwd=source)


def circles(*packages: str) -> list[tuple[str, ...]]:
    """For each import that closes a circle among ``packages`` (default ``fpa``), the circle: the importer,
    then the chain back to it."""
    graph = grimp.build_graph(*(packages or ("fpa",)), cache_dir=None)
    return [(importer, *chain) for importer in sorted(graph.modules)
            for imported in sorted(graph.find_modules_directly_imported_by(importer))
            if (chain := graph.find_shortest_chain(imported, importer))]


def mutual_imports() -> list[tuple[str, str]]:
    """Each pair of fpa's packages (or top-level modules) of which each imports the other, some module of
    the one a module of the other."""
    graph = grimp.build_graph("fpa", cache_dir=None)
    imports = {(_package(importer), _package(imported)) for importer in graph.modules
               for imported in graph.find_modules_directly_imported_by(importer)}
    return sorted((one, other) for one, other in imports if one < other and (other, one) in imports)


def _package(module: str) -> str:
    """``fpa.<name>`` of a module of fpa: the package, or the top-level module, it belongs to."""
    return ".".join(module.split(".")[:2])


def _source_with(tmp_path: Path, path: str, text: str) -> Path:
    """A copy of src/ with ``text`` appended to ``fpa/<path>``."""
    shutil.copytree(ROOT / "src" / "fpa", tmp_path / "fpa", ignore=shutil.ignore_patterns("__pycache__"))
    with open(tmp_path / "fpa" / path, "a") as handle:
        handle.write(text)
    return tmp_path


def test_the_import_contracts_are_kept():
    done = lint_imports(ROOT / "src")
    assert done.returncode == 0, done.stdout + done.stderr


def test_an_import_from_a_higher_layer_deferred_into_a_function_breaks_them(tmp_path):
    source = _source_with(tmp_path, "io.py", "\n\ndef _plan():\n    from fpa.planning import plan\n")
    done = lint_imports(source)
    assert done.returncode == 1 and "fpa's layers BROKEN" in done.stdout, done.stdout + done.stderr
    assert "fpa.io -> fpa.planning.plan" in done.stdout


def test_fpa_modules_import_no_circle():
    assert circles() == []


def test_the_benchmark_modules_import_no_circle(monkeypatch):
    """benchmarks/, its folders together (they import each other from benchmarks/, as the scripts do): e.g.
    gpu's tables render the record that its throughput module measures, not the other way too."""
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    folders = sorted(path.parent.name for path in (ROOT / "benchmarks").glob("*/__init__.py"))
    assert "gpu" in folders and circles(*folders) == []


def test_no_two_packages_import_each_other():
    assert mutual_imports() == []


def _found_in(source: Path, finder: str) -> subprocess.CompletedProcess:
    """``finder()`` of this module, printed, run on the ``fpa`` package under ``source``."""
    return subprocess.run([sys.executable, "-c", f"import test_import_graph; print(test_import_graph.{finder}())"],
                          capture_output=True, text=True, cwd=source,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join([str(source), str(Path(__file__).parent)])})


def test_a_circle_through_a_deferred_import_is_found(tmp_path):
    """fpa.io imports fpa.safe_load; safe_load importing io in a function closes a circle."""
    source = _source_with(tmp_path, "safe_load.py", "\n\ndef _write():\n    from fpa import io\n")
    found = _found_in(source, "circles")
    assert found.stdout.strip() == "[('fpa.io', 'fpa.safe_load', 'fpa.io'), ('fpa.safe_load', 'fpa.io', 'fpa.safe_load')]", (
        found.stdout + found.stderr)


def test_two_packages_importing_each_other_are_found(tmp_path):
    """fpa.data's benchmark loader reads fpa.samples' problem record; a sample module importing the loader in
    a function makes the pair import each other, though no module imports its own importer."""
    source = _source_with(tmp_path, "samples/pairs.py", "\n\ndef _load():\n    from fpa.data import benchmarks\n")
    found = _found_in(source, "mutual_imports")
    assert found.stdout.strip() == "[('fpa.data', 'fpa.samples')]", found.stdout + found.stderr
