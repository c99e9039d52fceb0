"""A fixed sample of the differential corpus (``benchmarks/grading/differential.py``): programs generated from
a tiny-mirror problem, graded by ours and by the benchmark's official harness (in a subprocess of its own,
``benchmarks/grading/official.py``). Every disagreement must be a documented one (``KEPT``), and the classes
the harness's own rules decide must agree: its import header and recursion limit, ``SystemExit``,
``class Solution``, the tuple rule, fences, numpy and pandas, the entry point found by parsing.

The programs are the corpus's own, so where bubblewrap cannot run (and ``CI`` is not ``true``) ours run in
the sandbox's unsandboxed mode (``own_programs_sandbox``, tests/grading/conftest.py)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from fpa.grading.code import bench as code_bench_module
from fpa.grading.code import livecodebench, load_tasks

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from grading import corpus, official, ours  # noqa: E402
from grading.differential import KEPT, disagreeing, prepare  # noqa: E402

TINY = {"mbppplus": "tiny/mbppplus/MbppPlus-v0.2.0.jsonl", "humanevalplus": "tiny/humanevalplus/HumanEvalPlus-v0.1.10.jsonl.gz"}
LCB_OPERATORS = ("gold", "header_names", "deep_recursion", "nested_tuples", "exit_1_after_print", "exit_str_after_print",
                 "quit_after_print", "global_in_helper", "top_level_function", "fence_python3", "import_numpy",
                 "os_exit_0_after_print")
EVALPLUS_OPERATORS = ("gold", "import_pandas", "fence_python3", "files_victim", "files_writer",
                      "helper_named_after_entry")
# (family, operator): (ours, official) where they differ, each a documented difference (KEPT)
EXPECTED: dict = {}

pytestmark = pytest.mark.skipif(any(importlib.util.find_spec(name) is None for name in ("livecodebench", "evalplus")),
                                reason="nvidia-livecodebench or evalplus not installed (.ci/run installs them --no-deps)")


@pytest.fixture(scope="module")
def mirror():
    path = code_bench_module.default_mirror()
    if not (path / TINY["mbppplus"]).is_file():
        pytest.skip(f"data mirror not found at {path} (set FPA_DATA_MIRROR)")
    return path


def _sample(cases: list[dict], operators: tuple[str, ...]) -> list[dict]:
    return [case for case in cases if case["operator"] in operators]


def _disagreements(cases, theirs, verdicts) -> dict:
    return {(case["family"], case["operator"]): (bool(mine[0]), other)
            for case, other, mine in disagreeing(cases, theirs, verdicts)}


def test_lcb_families_agree_with_livecodebench(mirror, own_programs_sandbox):
    tasks = load_tasks("mbppplus", mirror / TINY["mbppplus"])
    problems = corpus.lcb_problems(tasks, corpus.probe(dict(list(tasks.items())[:3]), 4), 1)
    stdin = prepare(_sample(corpus.lcb_stdin_cases(problems), LCB_OPERATORS))
    functional = prepare(_sample(corpus.lcb_functional_cases(problems), LCB_OPERATORS))
    found = {}
    for family, cases in (("lcb_stdin", stdin), ("lcb_functional", functional)):
        theirs = official.verdicts(family, cases)
        found.update(_disagreements(cases, theirs, ours.grade(family, cases, own_programs_sandbox)))
    print(f"\n{len(stdin) + len(functional)} programs; disagreements: {found}")
    assert all(key in KEPT for key in found)
    assert found == EXPECTED


def test_evalplus_families_agree_with_evalplus(mirror, own_evalplus_sandbox):
    found = {}
    for bench in ("mbppplus", "humanevalplus"):
        tasks = load_tasks(bench, mirror / TINY[bench])
        first = dict(list(tasks.items())[:1])
        cases = prepare(_sample(corpus.evalplus_cases(bench, first, {}), EVALPLUS_OPERATORS))
        theirs = official.verdicts(bench, cases, mirror / TINY[bench])
        verdicts = ours.grade(bench, cases, own_evalplus_sandbox, tasks=first, workers=1)
        found.update(_disagreements(cases, theirs, verdicts))
    print(f"\ndisagreements: {found}")
    assert all(key in KEPT for key in found)


def test_code_tests_spec_shares_the_lcb_run(mirror, own_programs_sandbox):
    """``code_tests`` grades a functional spec in LCB's run: a top-level function passes (APPS's style)."""
    tasks = load_tasks("mbppplus", mirror / TINY["mbppplus"])
    problems = corpus.lcb_problems(tasks, corpus.probe(dict(list(tasks.items())[:3]), 4), 1)
    case = next(case for case in corpus.lcb_functional_cases(problems, "code_tests", "apps") if case["operator"] == "gold")
    assert ours.grade("code_tests", [case], own_programs_sandbox) == [(True, "lcb_pass")]


def test_the_import_header_is_livecodebenchs():
    """Ours is LiveCodeBench's ``import_string`` verbatim (read in a subprocess: importing its evaluation
    package raises this process's int-string limit)."""
    import subprocess

    from fpa.grading.code import lcb_run

    done = subprocess.run([sys.executable, "-c", "import sys\nfrom livecodebench.evaluation.testing_util import "
                           "import_string\nsys.stdout.write(import_string)"], capture_output=True, text=True, check=True)
    assert lcb_run.IMPORT_STRING == done.stdout


def test_expected_outputs_of_any_length():
    """LCB's process parses expected outputs of up to 50,000 digits and fails every program past that (a
    defect not kept); the host parses any length, past this process's int-string limit."""
    digits = "7" * 60_000
    assert livecodebench.expected_value(f"[{digits}]")[0] % 10**9 == 777_777_777
