"""Logged diagnostics and snapshots: every objective's log π_θ − log π_ref per class equals a float64
recomputation from the run's snapshots and the reference; the curve of a run equals ``fpa evaluate``
of each snapshot."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from fpa.io import read_json, read_jsonl, write_jsonl
from fpa.reference.cache import write_reference_cache
from fpa.toy.model import ToyModelConfig, build_toy_model
from fpa.toy.task import make_problems
from fpa.training import batches as B
from fpa.training.checkpoints import snapshot_name, snapshot_steps
from fpa.training.loop import train

# one micro-batch per step: the logged class means are means over the whole batch
TRAINING = {"lr": 3e-3, "warmup_steps": 1, "epochs": 2, "batch_problems": 4, "micro_batch_problems": 4,
            "max_length": 128, "eval_every": 4, "checkpoint_every": 4, "chunk_size": 64, "snapshot_every": 1}


def sequence_logps_float64(model_dir, samples, tokenizer) -> torch.Tensor:
    """Σ_t log π(y_t | x, y_<t) of each sample by a plain float64 forward over the whole vocabulary."""
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float64).eval()
    logps = []
    for sample in samples:
        prompt = tokenizer(sample["prompt"], add_special_tokens=False)["input_ids"]
        completion = tokenizer(sample["completion"], add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        ids = torch.tensor([prompt + completion])
        with torch.no_grad():
            logprobs = torch.log_softmax(model(ids).logits[0, :-1], dim=-1)
        targets = ids[0, len(prompt):]
        logps.append(logprobs[len(prompt) - 1:].gather(1, targets[:, None]).sum())
    return torch.stack(logps)


@pytest.fixture(scope="module")
def reference_cache(tmp_path_factory, toy_model_dir, tiny_dataset):
    path = tmp_path_factory.mktemp("cache") / "cache"
    samples = read_jsonl(tiny_dataset / "train.jsonl") + read_jsonl(tiny_dataset / "val.jsonl")
    write_reference_cache(toy_model_dir, samples, AutoTokenizer.from_pretrained(toy_model_dir), path,
                          max_length=128, dtype="float32")
    return path


@pytest.mark.parametrize("objective, params", [("offrl", {}), ("fpa", {"lam": 2.0})])
def test_logged_logratios_equal_float64_recomputation(tmp_path, toy_model_dir, tiny_dataset, reference_cache,
                                                      objective, params):
    work = tmp_path / "work"
    train(model_dir=str(toy_model_dir), train_path=str(tiny_dataset / "train.jsonl"),
          val_path=str(tiny_dataset / "val.jsonl"), reference_dir=str(reference_cache), objective_name=objective,
          params=params, training=TRAINING, seed=5, work_dir=str(work), out_dir=str(tmp_path / "out"))
    with open(tmp_path / "out" / "training_metrics.csv") as handle:
        logged = {int(row["step"]): row for row in csv.DictReader(handle)}
    samples = read_jsonl(tiny_dataset / "train.jsonl")
    groups = B.make_groups(samples)
    tokenizer = AutoTokenizer.from_pretrained(toy_model_dir)
    snapshots = work / "snapshots"
    assert snapshot_steps(snapshots) == list(range(1, len(logged) + 1))
    for step in (1, 3):  # row step+1 is computed with the weights after `step` updates
        batch = [samples[i] for g in B.global_batch(groups, step, batch_problems=4, seed=5) for i in g.samples]
        policy = sequence_logps_float64(snapshots / snapshot_name(step), batch, tokenizer)
        reference = sequence_logps_float64(toy_model_dir, batch, tokenizer)
        correct = torch.tensor([s["correct"] for s in batch])
        for name, mask in (("correct", correct), ("incorrect", ~correct)):
            expected = (policy - reference)[mask].mean().item()
            assert abs(float(logged[step + 1][f"logratio_{name}"]) - expected) < 1e-3, (step, name)
        assert float(logged[step + 1]["logratio_incorrect"]) != 0.0


def test_diagnostics_off_leaves_offrl_without_reference(tmp_path, toy_model_dir, tiny_dataset, reference_cache):
    train(model_dir=str(toy_model_dir), train_path=str(tiny_dataset / "train.jsonl"),
          val_path=str(tiny_dataset / "val.jsonl"), reference_dir=str(reference_cache), objective_name="offrl",
          params={}, training={**TRAINING, "diagnostics": False, "snapshot_every": 0}, seed=5,
          work_dir=str(tmp_path / "work"), out_dir=str(tmp_path / "out"))
    with open(tmp_path / "out" / "training_metrics.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert rows and all(row["logratio_correct"] == "" for row in rows)
    assert not (tmp_path / "work" / "snapshots").exists()


# a toy model that has learnt the chains of its own 12 SFT problems by heart: sampled at temperature 1
# it solves some of them, not all, so Pass@1 tells one sampling of them from another
SCORING = ToyModelConfig(n_train_problems=12, n_operands=3, min_operands=3, slip_rate=0.0, d_model=64, n_heads=1,
                         d_ff=128, steps=200, batch_size=16, lr=3e-3, warmup_steps=10, log_every=100)


@pytest.mark.slow  # three `fpa` processes: train, curve, evaluate
def test_curve_equals_evaluate_of_each_snapshot(tmp_path, tiny_dataset):
    build_toy_model(tmp_path / "base", SCORING)
    # a learning rate that keeps what the model has learnt (TRAINING's unlearns it in 2 steps)
    run = {"objective": "offrl", "params": {}, "training": {**TRAINING, "lr": 1e-4, "epochs": 1, "snapshot_every": 2}}
    fpa = [sys.executable, "-m", "fpa"]
    subprocess.run(fpa + ["train", "--model", str(tmp_path / "base"), "--train", str(tiny_dataset / "train.jsonl"),
                          "--val", str(tiny_dataset / "val.jsonl"), "--run-json", json.dumps(run), "--method", "offrl",
                          "--seed", "1", "--work", str(tmp_path / "work"), "--out", str(tmp_path / "ckpt"),
                          "--snapshots", str(tmp_path / "snapshots")], check=True, capture_output=True)
    assert snapshot_steps(tmp_path / "snapshots") == [2]
    record = read_json(tmp_path / "snapshots.prov.json")
    assert record["snapshot_steps"] == [2] and record["snapshot_elapsed_s"]["2"] > 0
    problems = make_problems(SCORING.n_train_problems, SCORING.seed, split="sft", n_operands=SCORING.n_operands)
    write_jsonl(tmp_path / "bench.jsonl", problems)
    bench = {"source": "toy", "n": 4, "grader": "toy", "n_problems": len(problems), "n_operands": SCORING.n_operands}
    config = {"generation": {"backend": "hf", "stop": [], "temperature": 1.0, "max_new_tokens": 56, "batch_size": 48},
              "prompt_template": SCORING.prompt_template, "chat_template": False, "benchmarks": {"b": bench}}
    common = ["--config-json", json.dumps(config), "--seed", "3"]
    subprocess.run(fpa + ["curve", "--snapshots", str(tmp_path / "snapshots"), "--benchmark", "b",
                          str(tmp_path / "bench.jsonl"), "--work", str(tmp_path / "curve-work"),
                          "--out", str(tmp_path / "curve.csv"), *common], check=True, capture_output=True)
    subprocess.run(fpa + ["evaluate", "--model", str(tmp_path / "snapshots" / snapshot_name(2)), "--benchmark", "b",
                          str(tmp_path / "bench.jsonl"), str(tmp_path / "eval.json"), *common],
                   check=True, capture_output=True)
    with open(tmp_path / "curve.csv") as handle:
        (row,) = list(csv.DictReader(handle))
    evaluation = read_json(tmp_path / "eval.json")
    assert (row["step"], row["benchmark"], row["n"]) == ("2", "b", "4")
    assert 0 < evaluation["pass_at_1"] < 1, evaluation["correct"]  # else any sampling would give the same
    assert float(row["pass_at_1"]) == evaluation["pass_at_1"]
    # and its samples are evaluate's: those of the shards it kept (fpa.generation.shards), in order
    shards = sorted((tmp_path / "curve-work" / snapshot_name(2) / "b").glob("shard-*.json"))
    assert [[c["text"] for c in row] for shard in shards for row in read_json(shard)["completions"]] \
        == evaluation["completions"]
