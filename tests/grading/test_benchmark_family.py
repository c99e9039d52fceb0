"""A code benchmark family is one module: a user's package declares ``echo`` (its prompts, its program, its
sandbox run and its verdict) and names the module in the entry-point group ``fpa.grading``, and with no edit
of ``src/``, the schema or a doc, the family is a problem loader of ``prepare-benchmark``, a grader choice of
``check-config``, a row of the graders' table (config/README.md) and a grader that grades in the sandbox."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from fpa.config.schema import _parse_schema
from fpa.config.validate import check_config
from fpa.data.benchmarks import load_benchmark, loader_module, loaders
from fpa.errors import ConfigError
from fpa.grading import GRADERS, get_grader
from fpa.schema_doc import render

ROOT = Path(__file__).resolve().parents[2]
FAMILY = '''"""Echo: the program prints the task's word."""
import json
from fpa.grading.code.bench import CodeBench, whole_program
from fpa.samples.records import MathProblem
from fpa.samples.rows import read_records
from fpa.sandbox import Limits

def load_tasks(path):
    return {row["id"]: row for row in read_records(path, {"id": str, "word": str})}

def load_problems(path, source="echo"):
    """"Print" and the task's word."""
    return [MathProblem(row["id"], f"Print {row['word']}.", row["id"], source)
            for row in read_records(path, {"id": str, "word": str})]

def grade_task(task, programs, sandbox):
    runs = [sandbox.run_python(program) for program in programs]
    return [(run.ok and run.stdout.strip() == task["word"], "echo_pass" if run.stdout.strip() == task["word"]
             else "echo_wrong") for run in runs]

GRADERS = (CodeBench("echo", task_file="echo", limits=Limits(timeout_s=10.0), load_tasks=load_tasks,
                     load_problems=load_problems, program=whole_program, grade_task=grade_task),)
'''
TASKS = [{"id": "echo/0", "word": "hello"}, {"id": "echo/1", "word": "world"}]


@pytest.fixture
def echo_family(tmp_path, monkeypatch):
    """The user's package ``echo_family`` installed as ``pip install -e`` leaves it: its module on the import
    path and a dist-info naming it in the entry-point group ``fpa.grading``; the registry read again."""
    (tmp_path / "echo_family").mkdir()
    (tmp_path / "echo_family" / "__init__.py").write_text("")
    (tmp_path / "echo_family" / "family.py").write_text(FAMILY)
    info = tmp_path / "echo_family-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: echo_family\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[fpa.grading]\necho = echo_family.family\n")
    (tmp_path / "echo.jsonl").write_text("".join(json.dumps(task) + "\n" for task in TASKS))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(GRADERS, "_records", None)  # read again, with the entry point; put back after
    monkeypatch.setattr(GRADERS, "_module_of", {})
    _parse_schema.cache_clear()
    yield tmp_path
    monkeypatch.undo()
    _parse_schema.cache_clear()
    for module in [name for name in sys.modules if name.split(".")[0] == "echo_family"]:
        del sys.modules[module]


def _config(tmp_path: Path, grader: str) -> dict:
    """The toy config with a code column ``echo`` of the catalog part ``echo`` (a catalog of that one file)."""
    catalog = {"code": {"echo": {"path": "echo.jsonl", "sha256": "0" * 64, "url": "file:///echo.jsonl",
                                 "upstream_format": "jsonl", "loader": "echo", "records": len(TASKS)}}}
    (tmp_path / "catalog.yaml").write_text(yaml.safe_dump(catalog))
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    config["data"] = {"catalog": str(tmp_path / "catalog.yaml")}
    config["benchmarks"]["echo"] = {"source": "catalog", "parts": ["echo"], "grader": grader}
    return config


def test_a_family_module_is_a_loader_a_grader_choice_and_a_table_row(echo_family):
    assert "echo" in loaders() and loader_module("echo") == "echo_family.family"
    problems = load_benchmark("echo", echo_family / "echo.jsonl", source="echo", expected=len(TASKS))
    assert [(problem.problem, problem.answer) for problem in problems] == [("Print hello.", "echo/0"),
                                                                          ("Print world.", "echo/1")]
    check_config(_config(echo_family, "echo"))
    with pytest.raises(ConfigError, match=r"benchmarks\.echo\.grader: part 'echo' is read by the family 'echo' .*; "
                                          r"expected 'echo', got 'mbppplus'$"):
        check_config(_config(echo_family, "mbppplus"))
    assert ("| `echo` | `echo_family.family` | Echo: the program prints the task's word. | echo | \"Print\" and the "
            "task's word. | The completion's code is the whole program. |  |") in render(ROOT)


def test_a_family_module_grades_in_the_sandbox(echo_family, own_programs_sandbox):
    tasks = {task["id"]: task for task in TASKS}
    pairs = [("```python\nprint('hello')\n```", "echo/0"), ("print('hello')", "echo/1")]
    assert get_grader("echo")(pairs, tasks=tasks, sandbox=own_programs_sandbox) == [(True, "echo_pass"),
                                                                                    (False, "echo_wrong")]


def test_without_the_module_there_is_no_such_family(tmp_path):
    with pytest.raises(ConfigError, match=r"benchmarks\.echo\.grader: expected one of \[.*'mbppplus'.*\], got 'echo'$"):
        check_config(_config(tmp_path, "echo"))
    assert "echo" not in loaders() and "echo" not in GRADERS
