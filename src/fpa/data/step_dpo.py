"""Math-Step-DPO-10K as the offline dataset: each step-level preference pair is one group of two.

The paper's step-level supervision table (§4, ``tab:stepdpo``) trains on Math-Step-DPO-10K
(Lai et al. 2024, https://arxiv.org/abs/2406.18629; hub ``xinlai/Math-Step-DPO-10K``, 10,795
pairs, CC BY-NC 4.0) instead of self-generated samples. A record (dataset card) is::

    dataset               the problem's source dataset (e.g. MATH, GSM8K)
    prompt                the problem
    initial_reason_steps  the steps before the first wrong one, ending with that step's label:
                          "Let's think step by step.\\nStep 1: ...\\nStep 2:" (Step-DPO's
                          data_pipeline/prepare_for_correction.py cuts the solution there)
    chosen, rejected      the corrected and the wrong text of that step (up to the next "\\nStep ")
    full_chosen           the corrected solution from that step to its end
    full_rejected         the wrong solution from that step to its end
    answer                the problem's final answer

The preference is on the *next step* given the problem and the steps before it, so each pair
becomes the samples (x, y_w, +1) and (x, y_l, −1) with the same prompt

    x = the model's prompt for ``prompt`` (``prompt_template``, chat template if set)
        + " " + ``initial_reason_steps``,

as Step-DPO's ``train.py`` builds it (template + initial steps; chosen and rejected are the
completions). The space separates the steps from the template's answer cue ("A:"); after a
chat template's assistant header, which ends in a newline, nothing is added. Training on
``full_chosen``/``full_rejected`` instead would make the completions whole solution tails from
the branching step, i.e. outcome-level pairs sharing a prefix, and give up the step-level
localisation the experiment is about.

Samples use the offline dataset's record (``fpa.samples.offline``): Off-RL and FPA read the two
samples of a group with R = ±1, and DPO's pairing (``fpa.samples.pairs``) finds exactly one
(chosen, rejected) pair in each group. ``correct`` is the dataset's label, not a grader's
(``grade_rule`` says so). 5 % of the *problems* are held out, so a problem that appears in
several pairs (different first wrong steps) is never on both sides of the split. The
held-out problems, with their final ``answer``, are the validation benchmark the runs are
selected on (``validation_problems``), graded like the math benchmarks (``ANSWER_GRADER``).

Each sample has ``ends_answer: false``: its completion is one step, not the end of the
answer, so ``fpa.samples.tokenize.encode_record`` puts no EOS after it (the trainer and the
reference cache alike), as Step-DPO's ``stepdpo_trainer.py`` leaves EOS out of its step
completions; with EOS, the chosen step would also be rewarded for ending the answer there.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Iterable

from fpa.samples.rows import numbered_records
from fpa.samples.offline import OfflineDataset, hold_out

FIELDS = ("dataset", "prompt", "initial_reason_steps", "chosen", "rejected", "full_chosen", "full_rejected",
          "answer")
#: Fields that must hold text: the problem and the two steps the pair compares.
NON_EMPTY = ("prompt", "chosen", "rejected")
#: ``grade_rule`` of every sample: its label is the dataset's preference, no grader ran.
GRADE_RULE = "step_dpo_preference"
ID_PREFIX = "stepdpo"
#: the grader of a problem's final ``answer`` (the validation benchmark's): the math benchmarks'
ANSWER_GRADER = "math"


def read_step_dpo(path: str | os.PathLike) -> list[dict]:
    """The records of a Math-Step-DPO-10K JSONL file, checked field by field (extra keys are kept)."""
    records = numbered_records(path, FIELDS)
    for line, record in records:
        for field in FIELDS:
            if not isinstance(record[field], str):
                raise ValueError(f"{path}:{line}: field {field!r}: expected a string, "
                                 f"got {type(record[field]).__name__} {record[field]!r}")
        for field in NON_EMPTY:
            if not record[field].strip():
                raise ValueError(f"{path}:{line}: field {field!r}: expected text, got {record[field]!r}")
    return [record for _, record in records]


def step_prompt(problem_prompt: str, initial_reason_steps: str) -> str:
    """The rendered problem prompt continued by the steps before the preferred one."""
    if not initial_reason_steps:
        return problem_prompt
    separator = "" if problem_prompt[-1:].isspace() else " "
    return problem_prompt + separator + initial_reason_steps


def pair_id(index: int) -> str:
    """The ``problem_id`` of the samples of pair ``index`` (its line in the pairs file, from 0)."""
    return f"{ID_PREFIX}-{index:05d}"


def pair_samples(index: int, record: dict, problem_prompt: str) -> list[dict]:
    """Pair ``index`` as its group: the chosen step (R = +1) and the rejected one (R = −1)."""
    problem_id = pair_id(index)
    prompt = step_prompt(problem_prompt, record["initial_reason_steps"])
    return [{"id": f"{problem_id}/{sample_index}", "problem_id": problem_id, "sample_index": sample_index,
             "prompt": prompt, "completion": record[field], "answer": record["answer"], "correct": correct,
             "reward": 1.0 if correct else -1.0, "grade_rule": GRADE_RULE, "ends_answer": False}
            for sample_index, (field, correct) in enumerate((("chosen", True), ("rejected", False)))]


def build_step_dpo_dataset(records: list[dict], problem_prompts: list[str], *, validation_fraction: float,
                           seed: int) -> OfflineDataset:
    """Groups of two samples per pair, split by problem: ``validation_fraction`` of the distinct
    ``prompt`` texts (seeded) go to validation with all their pairs.

    ``problem_prompts[i]`` is record ``i``'s problem rendered with the model's prompt template.
    """
    if len(problem_prompts) != len(records):
        raise ValueError(f"{len(records)} Step-DPO records but {len(problem_prompts)} prompts")
    held_out = hold_out((r["prompt"] for r in records), validation_fraction, seed)
    train, val = [], []
    for index, (record, problem_prompt) in enumerate(zip(records, problem_prompts)):
        (val if record["prompt"] in held_out else train).extend(pair_samples(index, record, problem_prompt))
    if not train:
        raise ValueError(f"Step-DPO dataset: all {len(records)} pairs were held out for validation")
    summary = {
        "pairs": len(records),
        "problems": len({r["prompt"] for r in records}),
        "train_problems": len({r["prompt"] for r in records} - held_out),
        "val_problems": len(held_out),
        "train_samples": len(train),
        "val_samples": len(val),
        "sources": dict(sorted(Counter(r["dataset"] for r in records).items())),
    }
    return OfflineDataset(train, val, summary)


def validation_problems(records: list[dict], val_samples: Iterable[dict], where: str = "pairs") -> list[dict]:
    """The held-out problems as benchmark records ``{id, problem, answer}``: one per distinct
    ``prompt`` of the validation pairs (id: its first pair's), in the pairs file's order.

    ``records`` (read from ``where``) must be the pairs the dataset was built from: a held-out
    pair missing from them, or two pairs of one problem with different answers, is an error."""
    held_out = {sample["problem_id"] for sample in val_samples}
    by_problem: dict[str, dict] = {}
    found = 0
    for index, record in enumerate(records):
        if pair_id(index) not in held_out:
            continue
        found += 1
        first = by_problem.setdefault(record["prompt"], {"id": pair_id(index), "problem": record["prompt"],
                                                         "answer": record["answer"]})
        if first["answer"] != record["answer"]:
            raise ValueError(f"{where}: pair {index} (from 0): answer {record['answer']!r} differs from "
                             f"{first['answer']!r}, the answer of the same problem in pair {first['id']}")
    if found != len(held_out):
        raise ValueError(f"{where}: {len(held_out) - found} held-out pairs of the validation split are not in the "
                         f"pairs file ({len(records)} pairs): not the file the dataset was built from")
    return list(by_problem.values())
