"""Pass@1 of code completions generated earlier (rule ``generate_code``), graded in the sandbox.

Code evaluation is two jobs: generation needs the GPU and the model, grading needs the
sandbox and many CPU threads (BigCodeBench: seconds per sample). The result file has
the same fields as ``fpa.evaluation.evaluate.evaluate_records``, so tables and
``fpa explain`` treat code and math columns alike.
"""

from __future__ import annotations

from typing import Callable, Sequence

from fpa.evaluation.metrics import pass_at_1


def score_completions(records: Sequence[dict], completions: Sequence[Sequence[str]], *, n: int,
                      grader: Callable) -> dict:  # fmt: skip
    """Grade ``completions[i][j]`` against ``records[i]["answer"]``; Pass@1 and the kept matrix."""
    if len(completions) != len(records) or any(len(outs) != n for outs in completions):
        lengths = sorted({len(outs) for outs in completions})
        raise ValueError(f"completions: expected {len(records)} problems x {n} samples, "
                         f"got {len(completions)} problems with {lengths} samples")
    verdicts = iter(grader([(c, record["answer"]) for record, outs in zip(records, completions) for c in outs]))
    graded = [[next(verdicts) for _ in outs] for outs in completions]
    correct = [[int(ok) for ok, _ in row] for row in graded]
    return {
        "pass_at_1": pass_at_1(correct),
        "n": n,
        "n_problems": len(records),
        "problem_ids": [record["id"] for record in records],
        "correct": correct,
        "completions": [list(outs) for outs in completions],
        "grade_rules": [[rule for _, rule in row] for row in graded],
    }
