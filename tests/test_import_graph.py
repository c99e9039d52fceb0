"""No import circle among the ``fpa`` modules: a circle hides behind imports deferred into
functions until one of them runs first; the planning layer sits above what it checks."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "fpa"


def _module_name(path: Path, package: Path) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(node: ast.AST, package: str, modules: set[str]) -> set[str]:
    """The ``fpa`` modules an import statement loads (a submodule named in ``from X import y``
    counts as itself, a name defined in ``X`` as ``X``)."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name in modules}
    if not isinstance(node, ast.ImportFrom):
        return set()
    base = node.module or ""
    if node.level:
        parent = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join(parent + ([base] if base else []))
    targets = {f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names}
    return targets & modules


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the modules it imports anywhere in its body, deferred (function-level) imports included."""
    paths = {_module_name(path, package): path for path in package.rglob("*.py")}
    graph = {}
    for name, path in paths.items():
        package_name = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(), str(path))
        graph[name] = {target for node in ast.walk(tree)
                       for target in _imported(node, package_name, set(paths))} - {name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle (its modules, the first repeated at the end), else None."""
    state: dict[str, str] = {}
    stack: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = "open"
        stack.append(module)
        for target in sorted(graph.get(module, ())):
            if state.get(target) == "open":
                return stack[stack.index(target):] + [target]
            if target not in state and (cycle := visit(target)):
                return cycle
        state[module] = "done"
        stack.pop()
        return None

    for module in sorted(graph):
        if module not in state and (cycle := visit(module)):
            return cycle
    return None


def test_fpa_modules_import_no_circle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle)


def test_the_graph_sees_deferred_and_relative_imports(tmp_path):
    package = tmp_path / "fpa"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("from .leaf import VALUE\n")
    (package / "sub" / "leaf.py").write_text("def f():\n    from fpa.top import g\n")
    (package / "top.py").write_text("from fpa.sub import leaf\n")
    graph = import_graph(package)
    assert graph == {"fpa": set(), "fpa.sub": {"fpa.sub.leaf"}, "fpa.sub.leaf": {"fpa.top"}, "fpa.top": {"fpa.sub.leaf"}}
    assert find_cycle(graph) == ["fpa.sub.leaf", "fpa.top", "fpa.sub.leaf"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


# Layers, lowest first: a module imports only from its own layer or lower ones. A name is a
# package (every module under it) or a module; the longest name that contains a module places it.
LAYERS = (
    ("fpa", "fpa.io", "fpa.numerics", "fpa.safe_load", "fpa.containment", "fpa.progress", "fpa.errors",
     "fpa.project"),  # foundations: files, numerics, logs, the input error, the checkout
    ("fpa.data", "fpa.grading", "fpa.sandbox", "fpa.toy", "fpa.generation", "fpa.objectives", "fpa.online",
     "fpa.reference", "fpa.training", "fpa.evaluation", "fpa.analysis", "fpa.aggregation", "fpa.memory",
     "fpa.provenance", "fpa.figures"),  # the library: each does one stage's work on what it is given
    ("fpa.config", "fpa.schema_doc", "fpa.resources", "fpa.memory.plan", "fpa.memory.cost"),  # a config: its schema, runs, jobs
    ("fpa.planning",),  # a config's DAG, and the checks that need the library's registries
    ("fpa.cli", "fpa.__main__"),  # the commands
)


def layer_of(module: str) -> int | None:
    placed = [(len(name), index) for index, names in enumerate(LAYERS) for name in names
              if module == name or module.startswith(name + ".")]
    return max(placed)[1] if placed else None


def upward_imports(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    return {(module, target) for module, targets in graph.items() for target in targets
            if layer_of(target) > layer_of(module)}


def test_every_module_has_a_layer():
    assert [module for module in import_graph() if layer_of(module) is None] == []


def test_no_module_imports_from_a_higher_layer():
    upward = upward_imports(import_graph())
    assert upward == set(), "imports from a higher layer"


def test_data_imports_nothing_of_the_config_layer():
    graph = import_graph()
    config_layer = layer_of("fpa.config")
    reached = {(module, target) for module, targets in graph.items() if module.startswith("fpa.data")
               for target in targets if layer_of(target) >= config_layer}
    assert reached == set()


def test_an_upward_import_is_found():
    graph = {"fpa.io": {"fpa.planning.plan"}, "fpa.planning.plan": {"fpa.io"}}
    assert upward_imports(graph) == {("fpa.io", "fpa.planning.plan")}
