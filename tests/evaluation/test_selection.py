"""Model selection on the validation split: the best Pass@1 wins, the earliest of tied steps; the
selected directory holds the chosen candidate's files as hard links, with the scores in provenance."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from fpa.evaluation.selection import link_tree, select_step
from fpa.io import read_json, write_jsonl
from fpa.toy.task import make_problems
from fpa.training.checkpoints import snapshot_name


def test_the_best_score_wins():
    assert select_step([(25, 0.80), (50, 0.91), (75, 0.88), (100, 0.90)]) == 50
    assert select_step([(100, 0.90)]) == 100


def test_ties_go_to_the_earliest_step_in_any_order():
    assert select_step([(75, 0.91), (25, 0.80), (50, 0.91), (100, 0.91)]) == 50
    assert select_step([(40, 0.0), (80, 0.0), (12, 0.0)]) == 12


def test_no_candidate_is_an_error():
    with pytest.raises(ValueError, match="no candidates"):
        select_step([])


def test_link_tree_links_every_file(tmp_path):
    (tmp_path / "src" / "sub").mkdir(parents=True)
    (tmp_path / "src" / "model.safetensors").write_bytes(b"weights")
    (tmp_path / "src" / "sub" / "tokenizer.json").write_text("{}")
    link_tree(tmp_path / "src", tmp_path / "dst")
    for name in ("model.safetensors", "sub/tokenizer.json"):
        assert os.path.samefile(tmp_path / "src" / name, tmp_path / "dst" / name)


def test_select_checkpoint_links_the_best_candidate(tmp_path, toy_model_dir, tiny_dataset):
    training = {"lr": 3e-3, "warmup_steps": 1, "epochs": 2, "batch_problems": 4, "micro_batch_problems": 4,
                "max_length": 128, "eval_every": 4, "checkpoint_every": 4, "chunk_size": 64, "snapshot_every": 2}
    fpa = [sys.executable, "-m", "fpa"]
    run = {"objective": "offrl", "params": {}, "training": training}
    subprocess.run(fpa + ["train", "--model", str(toy_model_dir), "--train", str(tiny_dataset / "train.jsonl"),
                          "--val", str(tiny_dataset / "val.jsonl"), "--run-json", json.dumps(run), "--method", "offrl",
                          "--seed", "1", "--work", str(tmp_path / "work"), "--out", str(tmp_path / "ckpt"),
                          "--snapshots", str(tmp_path / "snapshots")], check=True, capture_output=True)
    write_jsonl(tmp_path / "val.jsonl", make_problems(6, seed=0, n_operands=3))
    bench = {"source": "validation", "n": 2, "grader": "toy"}
    config = {"generation": {"backend": "hf", "stop": [], "temperature": 1.0, "max_new_tokens": 12, "batch_size": 8},
              "prompt_template": "Q: {problem}\nA:", "chat_template": False, "benchmarks": {"val": bench}}
    subprocess.run(fpa + ["select-checkpoint", "--snapshots", str(tmp_path / "snapshots"),
                          "--checkpoint", str(tmp_path / "ckpt"), "--benchmark", "val", str(tmp_path / "val.jsonl"),
                          "--config-json", json.dumps(config), "--seed", "3", "--work", str(tmp_path / "select-work"),
                          "--out", str(tmp_path / "selected")], check=True, capture_output=True)
    record = read_json(tmp_path / "selected.prov.json")
    selected = record["selected"]
    final_step = read_json(tmp_path / "ckpt" / "training_state.json")["summary"]["steps"]
    scores = [(c["step"], c["pass_at_1"]) for c in record["candidates"]]
    assert [step for step, _ in scores] == [2, final_step] and final_step == 4
    assert selected["step"] == select_step(scores) and selected["final_step"] == final_step
    assert selected["pass_at_1"] == dict(scores)[selected["step"]] and selected["benchmark"] == "val"
    chosen = tmp_path / "ckpt" if selected["step"] == final_step else tmp_path / "snapshots" / snapshot_name(2)
    assert os.path.samefile(chosen / "model.safetensors", tmp_path / "selected" / "model.safetensors")
