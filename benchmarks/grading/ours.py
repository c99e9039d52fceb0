"""Our graders' verdicts on the corpus, as ``fpa`` grades each family: ``livecodebench.grade_one`` per program
(the LCB families), ``tests.grade_tests_one`` (``code_tests``), ``grade_code_many`` (MBPP+, HumanEval+,
BigCodeBench). ``differential.py`` runs this file in a fresh process on the ``src`` of the checkout it grades
with (this one, or an earlier commit's from ``git archive``), so it names only what both have;
``tests/grading/test_differential_sample.py`` imports ``grade``.

    PYTHONPATH=<src> python benchmarks/grading/ours.py CASES.json MODE FAMILY [TASK_FILE]   # prints the verdicts
"""

from __future__ import annotations

import json
import sys
from concurrent.futures import ThreadPoolExecutor

LCB_FAMILIES = ("lcb_stdin", "lcb_functional", "code_tests")


def grade(family: str, cases: list[dict], sandbox, tasks: dict | None = None, workers: int = 2) -> list[tuple]:
    """``(correct, rule)`` per case of one family, in order; ``tasks``: the task file's tasks (the families
    graded by task id)."""
    from fpa.grading.code import grade_code_many

    if family in LCB_FAMILIES:
        with ThreadPoolExecutor(workers) as pool:
            return list(pool.map(lambda case: _lcb_one(family, case, sandbox), cases))
    return grade_code_many(family, [(case["completion"], case["problem"]) for case in cases], tasks=tasks,
                           workers=workers, sandbox=sandbox)


def _lcb_one(family: str, case: dict, sandbox) -> tuple:
    from fpa.grading.code import extract_code, livecodebench
    from fpa.grading.code import tests as code_tests

    if family == "code_tests":
        spec = {"testtype": case["tests"][0]["testtype"], "func_name": case["func_name"],
                "tests": [{"input": test["input"], "output": test["output"]} for test in case["tests"]]}
        return code_tests.grade_tests_one(case["completion"], json.dumps(spec), sandbox)
    problem = {"question_id": case["problem"], "metadata": json.dumps({"func_name": case["func_name"]})}
    return livecodebench.grade_one(problem, extract_code(case["completion"]), sandbox, tests=case["tests"])


def main(argv: list[str]) -> None:
    import warnings

    from fpa.grading.code import livecodebench, load_tasks, make_sandbox
    from fpa.sandbox import Sandbox

    warnings.simplefilter("ignore")  # mode none warns: the programs are the corpus's own
    cases_file, mode, family = argv[:3]
    with open(cases_file) as handle:
        cases = json.load(handle)
    if family in LCB_FAMILIES:
        verdicts = grade(family, cases, Sandbox(livecodebench.LIMITS, mode=mode))
    else:
        verdicts = grade(family, cases, make_sandbox(family, mode), tasks=load_tasks(family, argv[3]))
    print(json.dumps(verdicts))


if __name__ == "__main__":
    main(sys.argv[1:])
