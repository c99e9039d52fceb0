"""Pass@1 of one checkpoint on one benchmark, as the paper's appendix defines it:
n samples per problem at temperature T, z_ij ∈ {0,1}, Pass@1 = mean_i mean_j z_ij.
The whole correctness matrix (and every completion) is kept, so pass@k or majority
vote can be computed later from the same file."""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

from fpa.evaluation.metrics import pass_at_1
from fpa.generation.shards import SHARD_ROWS, generate_sharded


def evaluate_records(backend, records: Sequence[dict], prompts: Sequence[str], *, n: int, temperature: float,
                     max_new_tokens: int, seed: int, grader: Callable, work_dir: str | None = None,
                     key_parts: Mapping | None = None, shard_rows: int = SHARD_ROWS) -> dict:
    """Generate (resumably, with ``work_dir``: see ``fpa.generation.shards``), grade, score."""
    completions = generate_sharded(backend, prompts, n=n, temperature=temperature, max_new_tokens=max_new_tokens,
                                   seed=seed, work_dir=work_dir, key_parts=key_parts or {}, shard_rows=shard_rows)
    verdicts = iter(grader([(c, record["answer"]) for record, outs in zip(records, completions) for c in outs]))
    graded = [[next(verdicts) for _ in outs] for outs in completions]
    correct = [[int(ok) for ok, _ in row] for row in graded]
    return {
        "pass_at_1": pass_at_1(correct),
        "n": n,
        "n_problems": len(records),
        "problem_ids": [record["id"] for record in records],
        "correct": correct,
        "completions": completions,
        "grade_rules": [[rule for _, rule in row] for row in graded],
    }
