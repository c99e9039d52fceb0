"""The offline dataset D = {(x, y, R)}: K graded samples per problem.

Paper (appendix "Main Dataset Construction"): K = 8 samples per problem at T = 0.7
with seed 42, R = +1 correct / −1 incorrect, problems whose K samples all agree are
dropped (they carry no contrast), 5% of the remaining problems held out for
validation. Records use TRL's column names (``prompt``, ``completion``, ``reward``)
plus ``problem_id`` and ``correct``.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, Iterable

@dataclass(frozen=True)
class OfflineDataset:
    train: list[dict]
    val: list[dict]
    summary: dict


def grade_samples(samples: list[dict], grader: Callable) -> list[dict]:
    """Add ``correct``, ``reward`` (+1/−1) and the deciding ``grade_rule`` to each sample."""
    verdicts = grader([(sample["completion"], sample["answer"]) for sample in samples])
    return [{**sample, "correct": bool(correct), "reward": 1.0 if correct else -1.0, "grade_rule": rule}
            for sample, (correct, rule) in zip(samples, verdicts)]


def group_by_problem(samples: Iterable[dict]) -> dict[str, list[dict]]:
    groups: dict[str, list[dict]] = defaultdict(list)
    for sample in samples:
        groups[sample["problem_id"]].append(sample)
    return dict(groups)


def hold_out(ids: Iterable[str], validation_fraction: float, seed: int) -> set[str]:
    """The ids held out for validation: ``validation_fraction`` of them (at least one when there
    are two or more), drawn by a ``seed``-ed shuffle of the sorted ids (the input order does not matter)."""
    ordered = sorted(set(ids))
    random.Random(seed).shuffle(ordered)
    n_val = round(validation_fraction * len(ordered))
    if validation_fraction > 0 and len(ordered) > 1:
        n_val = max(n_val, 1)
    return set(ordered[:n_val])


def build_offline_dataset(samples: list[dict], *, k: int, validation_fraction: float, seed: int) -> OfflineDataset:
    """Drop all-agree problems, then hold out ``validation_fraction`` of the kept problems."""
    groups = group_by_problem(samples)
    short = {pid: len(group) for pid, group in groups.items() if len(group) != k}
    if short:
        first = next(iter(short.items()))
        raise ValueError(f"samples: expected {k} samples per problem, problem {first[0]} has {first[1]} "
                         f"({len(short)} problems affected)")
    kept = [pid for pid, group in groups.items() if len({s["correct"] for s in group}) == 2]
    val_ids = hold_out(kept, validation_fraction, seed)
    train_ids = [pid for pid in kept if pid not in val_ids]
    if not train_ids:
        raise ValueError(f"offline dataset is empty: {len(groups)} problems, none with mixed outcomes among K={k}")
    train = [s for pid in sorted(train_ids) for s in groups[pid]]
    val = [s for pid in sorted(val_ids) for s in groups[pid]]
    all_correct = sum(all(s["correct"] for s in g) for g in groups.values())
    summary = {
        "problems": len(groups),
        "dropped_all_correct": all_correct,
        "dropped_all_incorrect": len(groups) - len(kept) - all_correct,
        "train_problems": len(train_ids),
        "val_problems": len(val_ids),
        "train_samples": len(train),
        "val_samples": len(val),
        "sample_accuracy": sum(s["correct"] for s in samples) / max(len(samples), 1),
    }
    return OfflineDataset(train, val, summary)


def validation_problems(problems: Iterable[dict], val_samples: Iterable[dict]) -> list[dict]:
    """The training problems held out for validation, as benchmark records ({id, problem, answer}),
    in the problems file's order: the paper selects λ on them."""
    held_out = {sample["problem_id"] for sample in val_samples}
    records = [{"id": p["id"], "problem": p["problem"], "answer": p["answer"]} for p in problems if p["id"] in held_out]
    if len(records) != len(held_out):
        raise ValueError(f"{len(held_out) - len(records)} validation problems are not in the problems file")
    return records
