"""grade_many extracts, de-duplicates and batches per gold; its verdicts stay grade_math's, pair by pair."""

import threading
from pathlib import Path

from fpa.catalog import CATALOG, read_benchmarks_config
from fpa.data.benchmarks import load_benchmark
from fpa.grading.math import GradeResult, grade_many, grade_math

PATHOLOGICAL = "\\boxed{9^{9^{9^{9}}}}"  # parses, then sympy never finishes evaluating it


def real_cases(tiny: Path, per_benchmark: int = 4) -> list[tuple[str, str]]:
    """Completions for the first problems of every tiny benchmark file: the gold, an equivalent
    or spaced form, another problem's gold, garbage, no box and a truncated box; boxed answers
    twice in different wrappings (a repeat that must hit the cache)."""
    pairs = []
    for name, entry in read_benchmarks_config(CATALOG)["benchmarks"].items():
        if "missing" in entry:
            continue
        problems = load_benchmark(entry["loader"], tiny / entry["path"], source=name)[:per_benchmark + 1]
        for problem, other in zip(problems, problems[1:]):
            gold = problem.answer
            for answer in (gold, gold.replace("\\frac", "\\dfrac").replace(",", ", "), other.answer, "", "?"):
                pairs += [(f"So $\\boxed{{{answer}}}$.", gold), (f"The final answer is \\boxed{{ {answer} }}", gold)]
            pairs += [(f"So the answer is {gold}.", gold), (f"First $\\boxed{{{gold}}}$, then \\boxed{{{gold}", gold)]
    return pairs


def test_batched_verdicts_equal_one_by_one_on_real_cases(tiny):
    pairs = real_cases(tiny)
    one_by_one = [grade_math(completion, gold) for completion, gold in pairs]
    assert grade_many(pairs, workers=2, timeout_s=60) == one_by_one
    # The cases exercise every path: repeats, no box, unparseable, right and wrong.
    assert len({(gold, result.extracted) for (_, gold), result in zip(pairs, one_by_one)}) < len(pairs) / 2
    assert {(result.correct, result.rule) for result in one_by_one} >= {
        (True, "math_verify"), (False, "math_verify"), (False, "parse_error"), (False, "no_boxed")}  # fmt: skip


def test_a_timeout_inside_a_task_leaves_the_other_answers_to_a_fresh_worker():
    # One gold, so one task: "1", the pathological answer, "2"; its duplicate is not graded again.
    pairs = [("\\boxed{1}", "1"), (PATHOLOGICAL, "1"), ("\\boxed{2}", "1"), (PATHOLOGICAL, "1"), ("\\boxed{ 1 }", "1")]
    out = {}
    thread = threading.Thread(target=lambda: out.update(results=grade_many(pairs, workers=1, timeout_s=1.0)))
    thread.start()
    thread.join(timeout=60)
    assert not thread.is_alive(), "grade_many hung"
    timeout = GradeResult(False, "timeout", "9^{9^{9^{9}}}")
    assert out["results"] == [GradeResult(True, "math_verify", "1"), timeout, GradeResult(False, "math_verify", "2"),
                              timeout, GradeResult(True, "math_verify", "1")]  # fmt: skip
