"""The training loop: exact resume, data parallel == single process, cached == online reference."""

from __future__ import annotations

import csv
import os
import subprocess
import sys

import torch
from safetensors.torch import load_file

from fpa.io import read_jsonl
from fpa.training.loop import train
from fpa.training.session import TrainConfig, lr_factor

TRAINING = {"lr": 1e-3, "warmup_steps": 2, "epochs": 2, "batch_problems": 4, "micro_batch_problems": 2,
            "max_length": 128, "eval_every": 2, "checkpoint_every": 2, "chunk_size": 64}


def _weights(directory) -> dict[str, torch.Tensor]:
    return load_file(str(directory / "model.safetensors"))


def _train(tmp, model, data, name, **overrides):
    kwargs = dict(model_dir=str(model), train_path=str(data / "train.jsonl"), val_path=str(data / "val.jsonl"),
                  reference_dir=None, objective_name="offrl", params={}, training=TRAINING, seed=3,
                  work_dir=str(tmp / name / "work"), out_dir=str(tmp / name / "out"))
    kwargs.update(overrides)
    return train(**kwargs)


def test_lr_schedule_warms_up_then_decays():
    cfg = TrainConfig(warmup_steps=2, min_lr_ratio=0.1)
    factors = [lr_factor(step, 10, cfg) for step in range(10)]
    assert factors[:2] == [0.5, 1.0]
    assert all(a >= b for a, b in zip(factors[1:], factors[2:]))
    assert factors[-1] >= 0.1
    low = TrainConfig(warmup_steps=2, lr_decay_scale=0.8)
    assert lr_factor(9, 10, low) < lr_factor(9, 10, TrainConfig(warmup_steps=2))


def test_resume_after_kill_is_bit_identical(tmp_path, toy_model_dir, tiny_dataset):
    summary = _train(tmp_path, toy_model_dir, tiny_dataset, "straight")
    assert summary["steps"] == 4
    assert _train(tmp_path, toy_model_dir, tiny_dataset, "resumed", stop_after=3) == {"stopped_after": 3}
    assert not (tmp_path / "resumed" / "out").exists()
    assert (tmp_path / "resumed" / "work" / "latest").read_text() == "step-00000002"
    assert _train(tmp_path, toy_model_dir, tiny_dataset, "resumed")["resumed_from_step"] == 2
    assert summary["resumed_from_step"] == 0
    speed = summary["throughput"]  # the overhead table's figures: per process, steps after the first
    assert speed["examples_per_s"] > 0 and speed["tokens_per_s"] > speed["examples_per_s"]
    assert speed["memory"] == "rss" and speed["peak_memory_mb"] > 100
    straight, resumed = _weights(tmp_path / "straight" / "out"), _weights(tmp_path / "resumed" / "out")
    assert straight.keys() == resumed.keys()
    for name in straight:
        assert torch.equal(straight[name], resumed[name]), name
    with open(tmp_path / "resumed" / "out" / "training_metrics.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [row["step"] for row in rows] == ["1", "2", "3", "4"]
    # the run's wall clock goes on from the checkpoint: both processes' setup and steps, ascending
    elapsed = [float(row["elapsed_s"]) for row in rows]
    assert 0 < elapsed[0] < elapsed[1] < elapsed[2] < elapsed[3]


def test_two_gloo_processes_equal_one_process(tmp_path, toy_model_dir, tiny_dataset):
    import json

    # 8 problems in batches of 7: ranks take 4 and 3 problems, then 0 and 1 (the epoch's short
    # last batch), and the weights still match one process's
    training = {**TRAINING, "batch_problems": 7, "micro_batch_problems": 1}
    _train(tmp_path, toy_model_dir, tiny_dataset, "single", training=training)
    run = json.dumps({"objective": "offrl", "params": {}, "training": training})
    # `fpa train --processes 2` starts its two gloo ranks itself (torchrun, rendezvous on a free port)
    result = subprocess.run(
        [sys.executable, "-m", "fpa", "train", "--processes", "2", "--threads", "2", "--model", str(toy_model_dir),
         "--train", str(tiny_dataset / "train.jsonl"), "--val", str(tiny_dataset / "val.jsonl"), "--run-json", run,
         "--method", "offrl", "--seed", "3", "--work", str(tmp_path / "ddp" / "work"),
         "--out", str(tmp_path / "ddp" / "out")],
        env=os.environ, timeout=300, capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads((tmp_path / "ddp" / "out" / "training_state.json").read_text())["world"] == 2
    single, ddp = _weights(tmp_path / "single" / "out"), _weights(tmp_path / "ddp" / "out")
    for name in single:
        torch.testing.assert_close(ddp[name], single[name], rtol=1e-5, atol=1e-6)


def test_cached_reference_equals_online(tmp_path, toy_model_dir, tiny_dataset):
    from transformers import AutoTokenizer

    from fpa.reference.cache import write_reference_cache

    samples = read_jsonl(tiny_dataset / "train.jsonl") + read_jsonl(tiny_dataset / "val.jsonl")
    tokenizer = AutoTokenizer.from_pretrained(toy_model_dir)
    write_reference_cache(toy_model_dir, samples, tokenizer, tmp_path / "cache", max_length=128, dtype="float32")
    common = dict(objective_name="fpa", params={"lam": 2.0}, )
    _train(tmp_path, toy_model_dir, tiny_dataset, "cached", reference_dir=str(tmp_path / "cache"), **common)
    _train(tmp_path, toy_model_dir, tiny_dataset, "online", training={**TRAINING, "reference": "online"}, **common)
    cached, online = _weights(tmp_path / "cached" / "out"), _weights(tmp_path / "online" / "out")
    for name in cached:
        torch.testing.assert_close(cached[name], online[name], rtol=1e-5, atol=1e-6, msg=name)


def test_fused_adamw_trains_the_same_weights_as_the_default(tmp_path, toy_model_dir, tiny_dataset):
    """``training.adamw: fused`` is torch's one-kernel update of the same AdamW: the same weights
    after the run (to rounding), and the optimizer really is the fused one."""
    from fpa.training.session import open_session

    _train(tmp_path, toy_model_dir, tiny_dataset, "default")
    _train(tmp_path, toy_model_dir, tiny_dataset, "fused", training={**TRAINING, "adamw": "fused"})
    default, fused = _weights(tmp_path / "default" / "out"), _weights(tmp_path / "fused" / "out")
    for name in default:
        torch.testing.assert_close(fused[name], default[name], rtol=1e-4, atol=1e-6, msg=name)
    session, _ = open_session(str(toy_model_dir), str(tiny_dataset / "train.jsonl"),
                              str(tiny_dataset / "val.jsonl"), None, "offrl", {},
                              TrainConfig.from_dict({**TRAINING, "adamw": "fused"}), seed=3)
    assert session.optimizer.optimizer.defaults["fused"] is True
