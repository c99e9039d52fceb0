"""The Step-DPO dataset, as `fpa step-dpo-dataset` writes it, read unchanged downstream: one DPO pair
per group, Off-RL/FPA batches of ±1 rewards, the reference cache, and a training step of each."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from transformers import AutoTokenizer

from fpa.cli import main
from fpa.io import read_jsonl
from fpa.reference.cache import write_reference_cache
from fpa.samples.pairs import build_pairs
from fpa.training import batches as B
from fpa.training.loop import train

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "step_dpo" / "train.jsonl"
TRAINING = {"lr": 1e-3, "warmup_steps": 1, "epochs": 1, "batch_problems": 4, "micro_batch_problems": 2,
            "max_length": 256, "eval_every": 1, "checkpoint_every": 10, "chunk_size": 64}


@pytest.fixture(scope="module")
def step_dpo_data(tmp_path_factory):
    directory = tmp_path_factory.mktemp("step-dpo")
    config = {"dataset": {"source": "step_dpo", "seed": 42, "validation_fraction": 0.05},
              "prompt_template": "Q: {problem}\nA:", "chat_template": False}
    main(["step-dpo-dataset", "--pairs", str(FIXTURE), "--config-json", json.dumps(config),
          "--out-train", str(directory / "train.jsonl"), "--out-val", str(directory / "val.jsonl")])
    return directory


@pytest.mark.parametrize("rule", ["all", "matched"])
def test_dpo_pairs_each_chosen_step_with_its_rejected_step(step_dpo_data, toy_model_dir, rule):
    samples = read_jsonl(step_dpo_data / "train.jsonl")
    tokenizer = AutoTokenizer.from_pretrained(toy_model_dir)
    groups = B.make_groups(samples)
    assert [len(group.samples) for group in groups] == [2] * (len(samples) // 2)
    batch = B.collate(groups, B.encode_dataset(tokenizer, samples, 256), samples, tokenizer.pad_token_id)
    assert batch.reward.tolist() == [1.0, -1.0] * len(groups)
    chosen, rejected = build_pairs(batch.reward, batch.group, rule)
    rows = batch.sample_index.tolist()
    pairs = [(samples[rows[c]], samples[rows[r]]) for c, r in zip(chosen.tolist(), rejected.tolist())]
    assert len(pairs) == len(groups)
    for winner, loser in pairs:
        assert winner["problem_id"] == loser["problem_id"] and winner["prompt"] == loser["prompt"]
        assert (winner["sample_index"], loser["sample_index"]) == (0, 1)


@pytest.mark.parametrize("objective, params", [("dpo", {"beta": 0.1}), ("offrl", {}), ("fpa", {"lam": 2.0})])
def test_one_training_step_per_method_on_the_cached_reference(step_dpo_data, toy_model_dir, tmp_path, objective,
                                                              params):
    samples = read_jsonl(step_dpo_data / "train.jsonl") + read_jsonl(step_dpo_data / "val.jsonl")
    tokenizer = AutoTokenizer.from_pretrained(toy_model_dir)
    write_reference_cache(toy_model_dir, samples, tokenizer, tmp_path / "cache", max_length=256, dtype="float32")
    summary = train(model_dir=str(toy_model_dir), train_path=str(step_dpo_data / "train.jsonl"),
                    val_path=str(step_dpo_data / "val.jsonl"), reference_dir=str(tmp_path / "cache"),
                    objective_name=objective, params=params, training=TRAINING, seed=3,
                    work_dir=str(tmp_path / "work"), out_dir=str(tmp_path / "out"))
    pairs = len(read_jsonl(step_dpo_data / "train.jsonl")) // 2
    assert summary["train_problems"] == pairs and summary["train_samples"] == 2 * pairs
    assert summary["steps"] == 2  # ceil(pairs / batch_problems 4)
    assert torch.isfinite(torch.tensor(summary["best_val_loss"]))


def test_step_samples_end_without_eos(toy_model_dir):
    """A Step-DPO completion is one step, not the end of the answer: no EOS after it (as in
    Step-DPO's own trainer). The trainer's batches and the reference cache both encode records
    with ``encode_record``."""
    from transformers import AutoTokenizer

    from fpa.samples.tokenize import encode_record
    from fpa.training.batches import encode_dataset

    tokenizer = AutoTokenizer.from_pretrained(toy_model_dir)
    step = {"prompt": "Q: 1+2\nA: Step 1:", "completion": " 1+2=3.", "ends_answer": False}
    answer = {"prompt": "Q: 1+2\nA:", "completion": " 1+2=3. \\boxed{3}"}
    encoded_step, encoded_answer = encode_dataset(tokenizer, [step, answer], 256)
    assert encoded_step.input_ids[-1] != tokenizer.eos_token_id
    assert encoded_answer.input_ids[-1] == tokenizer.eos_token_id
    assert encode_record(tokenizer, step, 256) == encoded_step
