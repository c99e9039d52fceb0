"""DAPO's dynamic sampling: the groups whose G completions all got the same reward are dropped
and the batch refilled from new prompts; only when the rounds run out are uniform groups kept."""

from __future__ import annotations

import torch
from online_helpers import make_trainer

from fpa.training.online.groups import concat_batches, informative_groups, take_groups


def test_informative_groups_are_those_with_both_outcomes():
    rewards = torch.tensor([1.0, 1, 1, 1, -1, 1, -1, -1, -1, -1, -1, -1, 0.5, 0.5, 0.5, -0.5])
    assert informative_groups(rewards, 4).tolist() == [False, True, False, True]


def test_groups_are_taken_whole_and_rounds_joined_with_their_padding_sides():
    first = {"prompt_ids": torch.tensor([[0, 7], [0, 7], [8, 9], [8, 9]]), "prompt_mask": torch.tensor([[0, 1]] * 2 + [[1, 1]] * 2),
             "completion_ids": torch.tensor([[5], [6], [5], [6]]), "completion_mask": torch.ones(4, 1, dtype=torch.long),
             "advantages": torch.tensor([1.0, -1.0, 0.0, 0.0]), "num_items_in_batch": torch.tensor(4)}
    second = {"prompt_ids": torch.tensor([[3], [3]]), "prompt_mask": torch.ones(2, 1, dtype=torch.long),
              "completion_ids": torch.tensor([[4, 4, 1], [4, 1, 0]]), "completion_mask": torch.tensor([[1, 1, 1], [1, 1, 0]]),
              "advantages": torch.tensor([0.5, -0.5]), "num_items_in_batch": torch.tensor(5)}
    kept = take_groups(first, torch.tensor([0]), 2)
    assert kept["advantages"].tolist() == [1.0, -1.0] and "num_items_in_batch" not in kept
    joined = concat_batches([kept, take_groups(second, torch.tensor([0]), 2)], pad_token_id=0)
    assert joined["prompt_ids"].tolist() == [[0, 7], [0, 7], [0, 3], [0, 3]]  # left-padded
    assert joined["prompt_mask"].tolist() == [[0, 1], [0, 1], [0, 1], [0, 1]]
    assert joined["completion_ids"].tolist() == [[5, 0, 0], [6, 0, 0], [4, 4, 1], [4, 1, 0]]  # right-padded
    assert joined["completion_mask"].sum().item() == 2 + 5


def _rows(kinds):
    return [{"prompt": f"Q: {index}+{index}\nA:", "answer": str(2 * index), "kind": kind} for index, kind in enumerate(kinds)]


def _reward_by_kind(prompts, completions, kind, **_):
    """'uniform' prompts: every completion +1; 'mixed': +1, −1 alternating within each group."""
    return [1.0 if k == "uniform" or i % 2 else -1.0 for i, k in enumerate(kind)]


def test_dynamic_sampling_refills_the_batch_with_informative_groups(tmp_path, toy_model_dir):
    rows = _rows(["uniform", "uniform", "mixed", "mixed", "uniform", "mixed", "mixed", "uniform"])
    trainer, hyper = make_trainer(toy_model_dir, tmp_path, "dapo", rows, _reward_by_kind)
    batch = [row for row in rows[:4] for _ in range(hyper.num_generations)]  # 2 uniform groups, 2 mixed
    output = trainer._generate_and_score_completions(batch)
    advantages = output["advantages"].view(-1, hyper.num_generations)
    assert advantages.shape == (4, hyper.num_generations)
    assert (advantages.abs().sum(1) > 0).all()  # every group informative
    assert output["num_items_in_batch"] == output["completion_mask"].sum()
    assert trainer._metrics["train"]["dynamic_sampling/rounds"][-1] >= 2
    assert trainer._metrics["train"]["dynamic_sampling/uniform_groups_kept"][-1] == 0


def test_dynamic_sampling_keeps_uniform_groups_only_when_its_rounds_run_out(tmp_path, toy_model_dir):
    rows = _rows(["uniform", "mixed", "uniform", "uniform"])
    trainer, hyper = make_trainer(toy_model_dir, tmp_path, "dapo", rows[:1] + rows[2:], _reward_by_kind,
                                  dynamic_sampling_rounds=3)
    batch = [row for row in rows for _ in range(hyper.num_generations)]
    output = trainer._generate_and_score_completions(batch)
    advantages = output["advantages"].view(-1, hyper.num_generations)
    assert advantages.shape == (4, hyper.num_generations)
    assert (advantages.abs().sum(1) > 0).tolist() == [True, False, False, False]  # the informative group first
    assert trainer._metrics["train"]["dynamic_sampling/rounds"][-1] == 3
    assert trainer._metrics["train"]["dynamic_sampling/uniform_groups_kept"][-1] == 3


def test_grpo_keeps_every_group(tmp_path, toy_model_dir):
    rows = _rows(["uniform", "mixed", "uniform", "uniform"])
    trainer, hyper = make_trainer(toy_model_dir, tmp_path, "grpo", rows, _reward_by_kind)
    output = trainer._generate_and_score_completions([row for row in rows for _ in range(hyper.num_generations)])
    assert (output["advantages"].view(4, -1).abs().sum(1) > 0).tolist() == [False, True, False, False]
    assert "dynamic_sampling/rounds" not in trainer._metrics["train"]
