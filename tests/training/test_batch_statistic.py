"""An objective's batch statistic (KTO's z0) is the whole optimizer batch's: KTO trains the same
weights, with the same z0 and losses, whether a batch is one micro-batch or many, on one process or
on two gloo ranks (FSDP, uneven shards: one rank pads with a zero-weight copy)."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys

import torch
from safetensors.torch import load_file

from fpa.training.loop import train

# 8 problems of 4 samples, 3 problems per step: batches of 3, 3, 2 problems
TRAINING = {"lr": 1e-3, "warmup_steps": 1, "epochs": 1, "batch_problems": 3, "max_length": 128, "eval_every": 1,
            "checkpoint_every": 10, "chunk_size": 64, "reference": "online"}


def _column(out, key: str) -> list[float]:
    with open(out / "training_metrics.csv", newline="") as handle:
        return [float(row[key]) for row in csv.DictReader(handle)]


def _single(tmp, model, data, micro_batch_problems: int):
    out = tmp / f"micro{micro_batch_problems}"
    train(model_dir=str(model), train_path=str(data / "train.jsonl"), val_path=str(data / "val.jsonl"),
          reference_dir=None, objective_name="kto", params={}, seed=3,
          training={**TRAINING, "micro_batch_problems": micro_batch_problems},
          work_dir=str(out / "work"), out_dir=str(out / "out"))
    return out / "out"


def _two_ranks(tmp, model, data):
    run = json.dumps({"objective": "kto", "params": {},
                      "training": {**TRAINING, "micro_batch_problems": 1, "parallel": "fsdp"}})
    result = subprocess.run(
        [sys.executable, "-m", "fpa", "train", "--processes", "2", "--threads", "1", "--model", str(model),
         "--train", str(data / "train.jsonl"), "--val", str(data / "val.jsonl"), "--run-json", run,
         "--method", "kto", "--seed", "3", "--work", str(tmp / "ranks" / "work"), "--out", str(tmp / "ranks" / "out")],
        env=os.environ, timeout=300, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    return tmp / "ranks" / "out"


def test_kto_trains_the_same_whatever_the_micro_batches_and_ranks(tmp_path, toy_model_dir, tiny_dataset):
    whole = _single(tmp_path, toy_model_dir, tiny_dataset, 3)  # each batch one micro-batch
    runs = {"micro-batches of 1 problem": _single(tmp_path, toy_model_dir, tiny_dataset, 1),
            "2 FSDP ranks, micro-batches of 1": _two_ranks(tmp_path, toy_model_dir, tiny_dataset)}
    reference = load_file(str(whole / "model.safetensors"))
    z0 = _column(whole, "z0")
    assert len(z0) == 3 and len(set(z0)) == 3  # a fresh estimate each step, at the step's weights
    for name, out in runs.items():
        print(f"\n{name}: z0 {_column(out, 'z0')} vs one micro-batch {z0}; "
              f"val_loss {_column(out, 'val_loss')} vs {_column(whole, 'val_loss')}")
        # r_θ is a difference of two float32 sums of ~100 token log-probs: another padding rounds them by ~1e-5
        torch.testing.assert_close(torch.tensor(_column(out, "z0")), torch.tensor(z0), rtol=0, atol=1e-4)
        torch.testing.assert_close(torch.tensor(_column(out, "val_loss")), torch.tensor(_column(whole, "val_loss")),
                                   rtol=1e-5, atol=1e-7)
        weights = load_file(str(out / "model.safetensors"))
        for key in reference:
            torch.testing.assert_close(weights[key], reference[key], rtol=1e-5, atol=1e-5, msg=f"{name}: {key}")
    # one process's training loss is the batch's (rank 0 logs its own shard's under 2 ranks)
    torch.testing.assert_close(torch.tensor(_column(runs["micro-batches of 1 problem"], "loss")),
                               torch.tensor(_column(whole, "loss")), rtol=1e-6, atol=1e-7)
