"""``fpa train-online``: the project's grader is the reward, and a run leaves what an offline
run leaves (checkpoint with per-step metrics and wall clock, snapshots, provenance)."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest
import torch

from fpa.grading import get_grader
from fpa.io import read_json, read_jsonl, write_jsonl
from fpa.samples.offline import grade_samples
from fpa.toy.task import make_problems
from fpa.training.online.reward import grader_reward


def test_the_reward_is_the_grader_that_labels_the_offline_data(tiny_dataset):
    samples = read_jsonl(tiny_dataset / "train.jsonl")
    reward = grader_reward("toy")
    rewards = reward([s["prompt"] for s in samples], [s["completion"] for s in samples], [s["answer"] for s in samples])
    assert rewards == [s["reward"] for s in grade_samples(samples, get_grader("toy"))]
    assert rewards == [1.0 if s["correct"] else -1.0 for s in samples] and set(rewards) == {1.0, -1.0}


RUN = {"objective": "dapo", "params": {"rollout_steps": 2, "batch_prompts": 2, "mini_batch_prompts": 1,
                                       "micro_batch": 4, "num_generations": 4, "max_new_tokens": 8,
                                       "dynamic_sampling_rounds": 2},
       "training": {"lr": 1e-4, "warmup_steps": 0, "max_grad_norm": 1.0, "weight_decay": 0.0,
                    "adam_betas": [0.9, 0.999], "precision": "fp32", "gradient_checkpointing": False,
                    "adamw": "default",
                    "snapshot_every": 2, "checkpoint_every": 2}}
SAMPLING = {"prompt_template": "Q: {problem}\nA:", "chat_template": False,
            "generation": {"backend": "hf", "stop": [], "tensor_parallel_size": 1, "temperature": 0.7,
                           "max_new_tokens": 8, "batch_size": 8}}


def _train_online(tmp_path, model_dir, name, *extra, run_json=RUN):
    problems = make_problems(6, seed=0, n_operands=3)
    write_jsonl(tmp_path / "problems.jsonl", problems)
    write_jsonl(tmp_path / "val.jsonl", [{"problem_id": problems[0]["id"]}])  # held out: never trained on
    run = tmp_path / name
    return subprocess.run(
        [sys.executable, "-m", "fpa", "train-online", "--model", str(model_dir), "--problems",
         str(tmp_path / "problems.jsonl"), "--exclude", str(tmp_path / "val.jsonl"), "--run-json", json.dumps(run_json),
         "--config-json", json.dumps(SAMPLING), "--grader", "toy", "--method", "dapo", "--seed", "1",
         "--work", str(run / "work"), "--out", str(run / "ckpt"), "--snapshots", str(run / "snaps"), *extra],
        capture_output=True, text=True, timeout=600)


def test_an_online_run_writes_a_checkpoint_snapshots_and_their_wall_clock(tmp_path, toy_model_dir):
    result = _train_online(tmp_path, toy_model_dir, "run")
    assert result.returncode == 0, result.stderr[-3000:]
    tmp_path = tmp_path / "run"
    with open(tmp_path / "ckpt" / "training_metrics.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [int(row["step"]) for row in rows] == [1, 2, 3, 4]  # 2 rollouts x 2 optimizer steps
    elapsed = [float(row["elapsed_s"]) for row in rows]
    assert 0 < elapsed[0] < elapsed[1] < elapsed[2] < elapsed[3]
    assert {"loss", "reward", "grad_norm", "sampling_rounds"} <= set(rows[0])
    state = read_json(tmp_path / "ckpt" / "training_state.json")
    assert state["summary"]["train_problems"] == 5 and state["summary"]["steps"] == 4
    assert sorted(p.name for p in (tmp_path / "snaps").iterdir()) == ["step-00000002", "step-00000004"]
    record = read_json(tmp_path / "snaps.prov.json")
    assert record["snapshot_steps"] == [2, 4]
    assert record["snapshot_elapsed_s"] == {"2": elapsed[1], "4": elapsed[3]}
    checkpoint = read_json(tmp_path / "ckpt.prov.json")
    assert checkpoint["rule"] == "train_online" and checkpoint["usage"]["wall_s"] >= elapsed[3]
    assert set(checkpoint["inputs"]) == {"model", "problems", "exclude"}
    assert not (tmp_path / "work").exists()


@pytest.mark.slow  # three online runs through TRL
def test_a_stopped_online_run_resumes_from_its_checkpoint_to_the_same_weights(tmp_path, toy_model_dir):
    from safetensors.torch import load_file

    assert _train_online(tmp_path, toy_model_dir, "straight").returncode == 0
    stopped = _train_online(tmp_path, toy_model_dir, "resumed", "--stop-after", "3")
    assert stopped.returncode != 0 and "stopped after 3 steps" in stopped.stderr
    assert not (tmp_path / "resumed" / "ckpt").exists()
    assert _train_online(tmp_path, toy_model_dir, "resumed").returncode == 0
    state = read_json(tmp_path / "resumed" / "ckpt" / "training_state.json")
    assert state["summary"]["resumed_from_step"] == 2
    with open(tmp_path / "resumed" / "ckpt" / "training_metrics.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [int(row["step"]) for row in rows] == [1, 2, 3, 4]
    elapsed = [float(row["elapsed_s"]) for row in rows]
    assert elapsed == sorted(elapsed)  # the clock goes on from the checkpoint
    straight = load_file(tmp_path / "straight" / "ckpt" / "model.safetensors")
    resumed = load_file(tmp_path / "resumed" / "ckpt" / "model.safetensors")
    assert all(torch.equal(straight[name], resumed[name]) for name in straight)


def test_an_online_run_on_two_gloo_processes(tmp_path, toy_model_dir):
    """The paper's 2-GPU setting on CPU: torchrun starts two ranks, whose dynamic-sampling rounds
    stay in step (TRL gathers rewards in each); rank 0 writes the checkpoint and snapshots."""
    run = {**RUN, "params": {**RUN["params"], "micro_batch": 2}}  # 4 completions per step: 2 on each rank
    result = _train_online(tmp_path, toy_model_dir, "ddp", "--processes", "2", "--threads", "2", run_json=run)
    assert result.returncode == 0, result.stderr[-3000:]
    with open(tmp_path / "ddp" / "ckpt" / "training_metrics.csv", newline="") as handle:
        assert [int(row["step"]) for row in csv.DictReader(handle)] == [1, 2, 3, 4]
    assert read_json(tmp_path / "ddp" / "snaps.prov.json")["snapshot_steps"] == [2, 4]



def test_fsdp_online_is_refused_on_cpu_rather_than_trained_as_ddp(tmp_path, toy_model_dir):
    """accelerate applies its FSDP plugin to GPU ranks only; on CPU TRL would train DDP replicas unsaid."""
    if torch.cuda.is_available():
        pytest.skip("GPUs present: FSDP online runs")
    run = {**RUN, "training": {**RUN["training"], "parallel": "fsdp"}}
    result = _train_online(tmp_path, toy_model_dir, "fsdp", run_json=run)
    assert result.returncode != 0
    assert "training.parallel: fsdp: fpa train-online shards through accelerate" in result.stderr
    assert not (tmp_path / "fsdp" / "ckpt").exists()
