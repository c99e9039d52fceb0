"""MBPP+ and HumanEval+: every canonical solution of the tiny files passes, a wrong one fails."""

from __future__ import annotations

import pytest
from code_helpers import TINY

pytest.importorskip("evalplus", reason="evalplus not installed (pip install --no-deps evalplus==0.3.1)")

from fpa.evaluation.metrics import pass_at_1  # noqa: E402
from fpa.grading.code import gold_program, gold_selfcheck_code, grade_code_many, load_tasks  # noqa: E402


@pytest.mark.parametrize("bench", ["mbppplus", "humanevalplus"])
def test_gold_passes_and_wrong_fails(bench, mirror):
    tasks = load_tasks(bench, mirror / TINY[bench])
    assert len(tasks) == 20
    # Gold and wrong of a task share one sandbox run (the expected outputs are computed once).
    pairs = [(gold_program(bench, task), task_id) for task_id, task in tasks.items()]
    pairs += [(f"def {task['entry_point']}(*a, **k):\n    return None\n", task_id) for task_id, task in tasks.items()]
    verdicts = grade_code_many(bench, pairs, tasks=tasks, workers=2)
    gold, wrong = verdicts[:20], verdicts[20:]
    failed = {task_id: rule for (_, task_id), (ok, rule) in zip(pairs, gold) if not ok}
    print(f"{bench} tiny gold: {20 - len(failed)}/20")
    assert not failed
    assert not any(ok for ok, _ in wrong), [v for v in wrong if v[0]]
    assert {rule for _, rule in wrong} <= {"evalplus_base_fail", "evalplus_plus_fail"}


def test_gold_selfcheck_code_report(mirror):
    report = gold_selfcheck_code(mirror, "mbppplus", workers=2, data_path=mirror / TINY["mbppplus"])
    assert (report["bench"], report["passed"], report["total"], report["failed"], report["known"]) == ("mbppplus", 20, 20, {}, {})


def test_pass_at_1_over_matrix(mirror):
    tasks = load_tasks("mbppplus", mirror / TINY["mbppplus"])
    task_ids = list(tasks)[:2]
    gold = "```python\n" + tasks[task_ids[0]]["prompt"] + tasks[task_ids[0]]["canonical_solution"] + "```"
    pairs = [(gold, task_ids[0]), ("def nope(:", task_ids[0]), ("print(1)", task_ids[1]), ("", task_ids[1])]
    verdicts = grade_code_many("mbppplus", pairs, tasks=tasks)
    matrix = [[int(verdicts[0][0]), int(verdicts[1][0])], [int(verdicts[2][0]), int(verdicts[3][0])]]
    assert matrix == [[1, 0], [0, 0]]
    assert pass_at_1(matrix) == 0.25


def test_unknown_task_and_bench_rejected(mirror):
    with pytest.raises(ValueError, match="unknown task ids"):
        grade_code_many("mbppplus", [("x", "Mbpp/999999")], data_path=mirror / TINY["mbppplus"])
    with pytest.raises(ValueError, match="bench: expected one of"):
        grade_code_many("apps", [("x", "1")])
