"""HF-format weights on disk are in the training's dtype: a bf16 run's snapshots and final checkpoint in
bf16 (half of fp32's disk), loadable as they are; the resumable checkpoint keeps the fp32 masters."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file

from fpa.training.loop import train

TRAINING = {"lr": 1e-3, "warmup_steps": 1, "epochs": 2, "batch_problems": 4, "micro_batch_problems": 2,
            "max_length": 128, "eval_every": 2, "checkpoint_every": 2, "chunk_size": 64, "snapshot_every": 2}


@pytest.mark.parametrize(("precision", "dtype"), [("bf16", torch.bfloat16), ("fp32", torch.float32)])
def test_snapshots_and_checkpoint_are_saved_in_the_training_dtype(tmp_path, toy_model_dir, tiny_dataset,
                                                                  precision, dtype):
    from transformers import AutoModelForCausalLM

    work, out = tmp_path / "work", tmp_path / "out"
    train(model_dir=str(toy_model_dir), train_path=str(tiny_dataset / "train.jsonl"),
          val_path=str(tiny_dataset / "val.jsonl"), reference_dir=None, objective_name="offrl", params={},
          training={**TRAINING, "precision": precision}, seed=3, work_dir=str(work), out_dir=str(out))
    snapshots = sorted((work / "snapshots").glob("step-*"))
    assert snapshots
    for directory in [*snapshots, out]:
        weights = load_file(str(directory / "model.safetensors"))
        assert {tensor.dtype for tensor in weights.values()} == {dtype}, directory
        assert json.loads((directory / "config.json").read_text())["dtype"] == str(dtype).removeprefix("torch.")
        model = AutoModelForCausalLM.from_pretrained(directory)
        assert model.dtype == dtype
        loaded = dict(model.named_parameters())
        assert set(weights) <= set(loaded) | set(dict(model.named_buffers()))
