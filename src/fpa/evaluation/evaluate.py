"""Pass@1 of one checkpoint on one benchmark, as the paper's appendix defines it:
n samples per problem at temperature T, z_ij ∈ {0,1}, Pass@1 = mean_i mean_j z_ij.
The whole correctness matrix (and every completion) is kept, so pass@k or majority
vote can be computed later from the same file."""

from __future__ import annotations

from typing import Callable, Sequence

from fpa.data.prompts import render_prompt
from fpa.evaluation.metrics import pass_at_1


def evaluate_records(backend, records: Sequence[dict], *, template: str, n: int, temperature: float,
                     max_new_tokens: int, seed: int, grader: Callable[[str, str], bool]) -> dict:
    prompts = [render_prompt(template, record["problem"]) for record in records]
    completions = backend.generate(prompts, n=n, temperature=temperature, max_new_tokens=max_new_tokens, seed=seed)
    correct = [[int(bool(grader(c, record["answer"]))) for c in outs] for record, outs in zip(records, completions)]
    return {
        "pass_at_1": pass_at_1(correct),
        "n": n,
        "n_problems": len(records),
        "problem_ids": [record["id"] for record in records],
        "correct": correct,
        "completions": completions,
    }
