"""fpa.paths: each path template of the DAG has one owner, which both writes it (the rules, planning,
tables, figures) and parses it (``fpa aggregate``, the cost plan)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from fpa import paths
from fpa.containment import WORK_AREAS

ROOT = Path(__file__).resolve().parents[1]
# a path under the work directory's results/ or resources/ (a job's log and benchmark record, logs/...,
# are its rule's own)
SPELLED = re.compile(r"(?:results|resources)/")


def _string_constants(source: str) -> list[tuple[int, str]]:
    """(line, text) of the string constants of ``source`` that are not docstrings, f-strings' pieces
    included."""
    tree = ast.parse(source)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)}
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


def test_no_rule_spells_a_path_template():
    spelled = [(rules.name, line) for rules in [ROOT / "Snakefile", *sorted((ROOT / "workflow" / "rules").glob("*.smk"))]
               for line in rules.read_text().splitlines() if re.search(r"[\"'](?:results|resources)/", line)]
    assert spelled == []


def test_no_module_but_the_owner_spells_a_path_template():
    owner = ROOT / "src" / "fpa" / "paths.py"
    spelled = [(str(module.relative_to(ROOT)), line, text) for module in sorted((ROOT / "src" / "fpa").rglob("*.py"))
               if module != owner for line, text in _string_constants(module.read_text()) if SPELLED.match(text)]
    assert spelled == []


def _filled(template: str) -> tuple[str, dict[str, str]]:
    values = {field: ("42" if field == "seed" else f"{field}.x-1") for field in re.findall(r"\{(\w+)\}", template)}
    return template.format(**values), values


@pytest.mark.parametrize("template", paths.TEMPLATES)
def test_each_template_parses_back_what_fills_it_under_any_directory(template):
    path, values = _filled(template)
    assert paths.parse(template, path) == values
    assert paths.parse(template, f"/elsewhere/work/{path}") == values
    assert template.split("/")[0] in WORK_AREAS


def test_a_path_of_another_template_or_a_seed_not_a_number_is_refused():
    evaluation, _ = _filled(paths.EVALUATION)
    with pytest.raises(ValueError, match=re.escape(f"{evaluation}: expected .../train/<model>/<method>/<seed>/"
                                                   "checkpoint")):
        paths.parse(paths.CHECKPOINT, evaluation)
    with pytest.raises(ValueError, match=r"expected \.\.\./eval/<model>/<method>/<seed>/<bench>\.json"):
        paths.parse(paths.EVALUATION, "results/eval/toy/fpa/last/toy8.json")


def test_bind_fills_some_wildcards_and_keeps_the_others_for_a_rule():
    assert paths.bind(paths.ANALYSIS["entanglement"], method="base") == \
        "results/analysis/entanglement/{model}/base/{seed}.csv"
    assert paths.bind(paths.EVALUATION, bench="toy8", seed=42) == "results/eval/{model}/{method}/42/toy8.json"
