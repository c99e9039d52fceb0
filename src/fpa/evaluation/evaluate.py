"""Pass@1 of one checkpoint on one benchmark, as the paper's appendix defines it:
n samples per problem at temperature T, z_ij ∈ {0,1}, Pass@1 = mean_i mean_j z_ij.
The whole correctness matrix (and every completion) is kept, so pass@k or majority
vote can be computed later from the same file. Completions come from
``fpa.generation.shards.generate_sharded`` (``fpa.cli.common.sample_benchmarks``)."""

from __future__ import annotations

from typing import Callable, Sequence

from fpa.evaluation.metrics import pass_at_1, pass_at_1_stderr
from fpa.generation.stops import Completion, completion_fields


def score_completions(records: Sequence[dict], completions: Sequence[Sequence[Completion]], *, n: int,
                      grader: Callable) -> dict:  # fmt: skip
    """Grade ``completions[i][j]`` (its text, cut at the harness's stop words: a completion that runs
    on into a new question is graded on its first answer) against ``records[i]["answer"]``; Pass@1,
    the kept matrix and each completion's finish reason.

    Code columns call this in their own job (``evaluate_code``: the sandbox and many CPU
    threads, no GPU) on completions that ``generate`` wrote earlier; the result has the same
    fields either way, so tables and ``fpa explain`` treat code and math columns alike."""
    if len(completions) != len(records) or any(len(outs) != n for outs in completions):
        lengths = sorted({len(outs) for outs in completions})
        raise ValueError(f"completions: expected {len(records)} problems x {n} samples, "
                         f"got {len(completions)} problems with {lengths} samples")
    verdicts = iter(grader([(c.text, record["answer"]) for record, outs in zip(records, completions) for c in outs]))
    graded = [[next(verdicts) for _ in outs] for outs in completions]
    correct = [[int(ok) for ok, _ in row] for row in graded]
    return {
        "pass_at_1": pass_at_1(correct),
        "pass_at_1_stderr": pass_at_1_stderr(correct),
        "n": n,
        "n_problems": len(records),
        "problem_ids": [record["id"] for record in records],
        "correct": correct,
        **completion_fields(completions),
        "grade_rules": [[rule for _, rule in row] for row in graded],
    }
