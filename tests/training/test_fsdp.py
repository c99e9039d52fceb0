"""FSDP2 on 2 gloo ranks trains what DDP on 2 ranks and one process train, resumes after a SIGKILL
of its launcher, and writes a consolidated HF checkpoint (tied and untied heads)."""

from __future__ import annotations

import csv
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from fpa.io import read_jsonl
from fpa.training.loop import train

# 8 problems, 4 per step over 2 ranks, 1 per micro-batch: 2 micro-batches per rank (accumulation), 6 steps
TRAINING = {"lr": 1e-3, "warmup_steps": 2, "epochs": 3, "batch_problems": 4, "micro_batch_problems": 1,
            "max_length": 128, "eval_every": 2, "checkpoint_every": 2, "chunk_size": 64}
PARAMS = {"offrl": {}, "fpa": {"lam": 2.0}, "dpo": {}}
# a test launching 2-rank gloo runs of `fpa train`: the full suite's (docs/testing.md)
LAUNCHES_RANKS = pytest.mark.slow
# the tests reading the module's two_ranks runs: on one worker, which launches them once
SHARES_TWO_RANKS = pytest.mark.xdist_group("fsdp_two_ranks")


@pytest.fixture(scope="module")
def reference_cache(tmp_path_factory, toy_model_dir, tiny_dataset) -> Path:
    from transformers import AutoTokenizer

    from fpa.reference.cache import write_reference_cache

    path = tmp_path_factory.mktemp("reference") / "cache"
    samples = read_jsonl(tiny_dataset / "train.jsonl") + read_jsonl(tiny_dataset / "val.jsonl")
    write_reference_cache(toy_model_dir, samples, AutoTokenizer.from_pretrained(toy_model_dir), path,
                          max_length=128, dtype="float32")
    return path


def _command(run_dir: Path, model: Path, data: Path, objective: str, parallel: str, reference: Path | None,
             training: dict = TRAINING) -> list[str]:
    run = json.dumps({"objective": objective, "params": PARAMS[objective],
                      "training": {**training, "parallel": parallel}})
    return [sys.executable, "-m", "fpa", "train", "--processes", "2", "--threads", "2",
            "--model", str(model), "--train", str(data / "train.jsonl"), "--val", str(data / "val.jsonl"),
            *(["--reference", str(reference)] if reference else []), "--run-json", run, "--method", objective,
            "--seed", "3", "--work", str(run_dir / "work"), "--out", str(run_dir / "out"),
            "--snapshots", str(run_dir / "snapshots")]


def _fpa_train(command: list[str]) -> None:
    result = subprocess.run(command, env=os.environ, timeout=300, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]


def _single(run_dir: Path, model: Path, data: Path, objective: str, reference: Path | None,
            training: dict = TRAINING) -> Path:
    train(model_dir=str(model), train_path=str(data / "train.jsonl"), val_path=str(data / "val.jsonl"),
          reference_dir=str(reference) if reference else None, objective_name=objective, params=PARAMS[objective],
          training=training, seed=3, work_dir=str(run_dir / "work"), out_dir=str(run_dir / "out"))
    return run_dir / "out"


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory, toy_model_dir, tiny_dataset, reference_cache):
    """``fpa train --processes 2`` of (objective, parallel), each run once for the module."""
    done = {}

    def run(objective: str, parallel: str) -> Path:
        if (objective, parallel) not in done:
            run_dir = tmp_path_factory.mktemp(f"{objective}-{parallel}")
            reference = reference_cache if objective != "offrl" else None
            _fpa_train(_command(run_dir, toy_model_dir, tiny_dataset, objective, parallel, reference))
            done[objective, parallel] = run_dir / "out"
        return done[objective, parallel]

    return run


def _metrics(out: Path, key: str) -> list[float]:
    with open(out / "training_metrics.csv", newline="") as handle:
        return [float(row[key]) for row in csv.DictReader(handle) if row.get(key)]


def _max_difference(a: list[float] | dict, b: list[float] | dict) -> float:
    if isinstance(a, dict):
        return max((a[name] - b[name]).abs().max().item() for name in a)
    return max(abs(x - y) for x, y in zip(a, b, strict=True))


@LAUNCHES_RANKS
@SHARES_TWO_RANKS
@pytest.mark.parametrize("objective", sorted(PARAMS))
def test_fsdp_on_two_ranks_trains_the_weights_of_one_process(tmp_path, objective, two_ranks, toy_model_dir,
                                                              tiny_dataset, reference_cache):
    single_out = _single(tmp_path / "single", toy_model_dir, tiny_dataset, objective,
                         reference_cache if objective != "offrl" else None)
    fsdp_out = two_ranks(objective, "fsdp")
    state = json.loads((fsdp_out / "training_state.json").read_text())
    assert (state["world"], state["training"]["parallel"], state["summary"]["steps"]) == (2, "fsdp", 6)
    single, fsdp = (load_file(str(out / "model.safetensors")) for out in (single_out, fsdp_out))
    assert fsdp.keys() == single.keys()
    # validation loss over all ranks
    val = {name: _metrics(out, "val_loss") for name, out in (("single", single_out), ("fsdp", fsdp_out))}
    print(f"\n{objective}: max|dloss| val fsdp-1proc {_max_difference(val['fsdp'], val['single']):.2e}; "
          f"max|dweight| fsdp-1proc {_max_difference(fsdp, single):.2e}")
    torch.testing.assert_close(torch.tensor(val["fsdp"]), torch.tensor(val["single"]), rtol=1e-5, atol=1e-6)
    # AdamW normalises each gradient: where one is tiny (k_proj.bias, ~1e-4 against v_proj.bias's ~1e-1),
    # reduction-order rounding moves the weight by ~1e-6 in 6 steps of lr 1e-3 (DDP against 1 process too)
    for name in single:
        torch.testing.assert_close(fsdp[name], single[name], rtol=1e-5, atol=1e-5, msg=name)


def _assert_same_training(out: Path, expected: Path) -> None:
    """The same training and validation losses at each step, and the same final weights."""
    for key, atol in (("loss", 1e-5), ("val_loss", 1e-6)):
        torch.testing.assert_close(torch.tensor(_metrics(out, key)), torch.tensor(_metrics(expected, key)),
                                   rtol=1e-5, atol=atol, msg=key)
    weights, expected_weights = (load_file(str(path / "model.safetensors")) for path in (out, expected))
    assert weights.keys() == expected_weights.keys()
    for name in expected_weights:
        torch.testing.assert_close(weights[name], expected_weights[name], rtol=1e-5, atol=1e-5, msg=name)


@LAUNCHES_RANKS
def test_fsdp_on_two_ranks_trains_packed_as_padded(tmp_path, two_ranks, toy_model_dir, tiny_dataset):
    """``training.attention: packed`` (the default, the module's other runs) against the padded ``masked``
    under FSDP2 on 2 ranks: the same training and validation losses and weights (tolerances as FSDP's
    against one process: AdamW normalises tiny gradients that rounding in another order moves)."""
    _fpa_train(_command(tmp_path, toy_model_dir, tiny_dataset, "offrl", "fsdp", None,
                        {**TRAINING, "attention": "masked"}))
    packed_out, masked_out = two_ranks("offrl", "fsdp"), tmp_path / "out"
    assert json.loads((masked_out / "training_state.json").read_text())["training"]["attention"] == "masked"
    assert json.loads((packed_out / "training_state.json").read_text())["training"]["attention"] == "packed"
    _assert_same_training(packed_out, masked_out)


@LAUNCHES_RANKS
@SHARES_TWO_RANKS
def test_fsdp_and_ddp_on_two_ranks_train_the_same_losses_and_weights(two_ranks):
    """Rank 0 reads the same shard under both, so its training loss is the same at each step; so are the
    validation losses and the weights. Off-RL only: the objective's statistics run inside the wrapped
    forward under both (``fpa.training.parallel.Policy``), so DDP is one code path for every objective;
    DDP against one process on uneven shards: tests/training/test_loop.py."""
    ddp_out, fsdp_out = two_ranks("offrl", "ddp"), two_ranks("offrl", "fsdp")
    assert json.loads((ddp_out / "training_state.json").read_text())["training"]["parallel"] == "ddp"
    _assert_same_training(fsdp_out, ddp_out)


@LAUNCHES_RANKS
@SHARES_TWO_RANKS
def test_fsdp_bf16_compute_changes_the_losses_within_rounding_and_keeps_fp32_masters(tmp_path, two_ranks,
                                                                                     toy_model_dir, tiny_dataset):
    """bf16 compute: the default's losses within bf16 rounding, other weights (the policy took effect)."""
    default_out = two_ranks("offrl", "fsdp")
    default = load_file(str(default_out / "model.safetensors"))
    _fpa_train(_command(tmp_path / "bf16", toy_model_dir, tiny_dataset, "offrl", "fsdp", None,
                        {**TRAINING, "fsdp_param_dtype": "bfloat16", "fsdp_reduce_dtype": "bfloat16"}))
    bf16 = load_file(str(tmp_path / "bf16" / "out" / "model.safetensors"))
    assert all(bf16[name].dtype == torch.float32 for name in default)  # the sharded master weights stay float32
    assert any(not torch.equal(bf16[name], default[name]) for name in default), "bf16 compute had no effect"
    losses = {name: torch.tensor(_metrics(out, "loss")) for name, out in (("fp32", default_out),
                                                                         ("bf16", tmp_path / "bf16" / "out"))}
    print(f"\nbf16 - fp32 training loss per step: {(losses['bf16'] - losses['fp32']).tolist()}")
    assert not torch.equal(losses["bf16"], losses["fp32"])
    torch.testing.assert_close(losses["bf16"], losses["fp32"], rtol=2e-2, atol=2e-2)


@LAUNCHES_RANKS
@SHARES_TWO_RANKS
def test_fsdp_checkpointing_kept_weights_and_offload_train_the_weights_of_the_plain_run(
        tmp_path, two_ranks, toy_model_dir, tiny_dataset, reference_cache):
    """What changes where weights live, when activations are computed and how the head's passes run, not
    what is trained, in one run: FSDP2 over checkpointed decoder layers (the paper's setting: each layer's
    forward recomputed in its backward, inside the layer's gathered unit), weights kept gathered from
    forward to backward, shards offloaded to host memory and the fused (compiled) head, on 2 gloo ranks,
    FPA through the cached reference: the weights and losses of the plain run."""
    plain_out = two_ranks("fpa", "fsdp")
    options = {"gradient_checkpointing": True, "fsdp_reshard_after_forward": False, "fsdp_cpu_offload": True,
               "fused_head": True}
    _fpa_train(_command(tmp_path / "options", toy_model_dir, tiny_dataset, "fpa", "fsdp", reference_cache,
                        {**TRAINING, **options}))
    options_out = tmp_path / "options" / "out"
    state = json.loads((options_out / "training_state.json").read_text())
    assert {key: state["training"][key] for key in options} == options
    assert (state["world"], state["summary"]["steps"]) == (2, 6)
    torch.testing.assert_close(torch.tensor(_metrics(options_out, "loss")),
                               torch.tensor(_metrics(plain_out, "loss")), rtol=1e-5, atol=1e-6)
    plain, changed = (load_file(str(out / "model.safetensors")) for out in (plain_out, options_out))
    for name in plain:
        torch.testing.assert_close(changed[name], plain[name], rtol=1e-5, atol=1e-5, msg=name)


def _processes_naming(path: Path) -> list[int]:
    """Ids of the live processes whose command line names ``path`` (a run's ranks and launcher)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and str(path) in (entry / "cmdline").read_bytes().decode(errors="replace"):
                found.append(int(entry.name))
        except OSError:  # exited meanwhile
            continue
    return found


@LAUNCHES_RANKS
@SHARES_TWO_RANKS
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; ranks die with the launcher on Linux")
def test_fsdp_resumes_after_sigkill_of_the_launcher_to_the_same_weights(tmp_path, two_ranks, toy_model_dir,
                                                                       tiny_dataset):
    straight = load_file(str(two_ranks("offrl", "fsdp") / "model.safetensors"))
    command = _command(tmp_path, toy_model_dir, tiny_dataset, "offrl", "fsdp", None)
    launcher = subprocess.Popen(command, env=os.environ, start_new_session=True, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 240
    while not (tmp_path / "work" / "latest").exists() and launcher.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    os.killpg(launcher.pid, signal.SIGKILL)  # the launcher's whole process group, as the OOM killer or kill -9
    launcher.wait()
    assert (tmp_path / "work" / "latest").read_text() == "step-00000002"
    deadline = time.monotonic() + 30  # the ranks (sessions of their own) follow their launcher
    while _processes_naming(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _processes_naming(tmp_path), "ranks outlived their SIGKILLed launcher"
    assert not (tmp_path / "out").exists(), "the run finished before the kill: nothing was resumed"

    _fpa_train(command)
    state = json.loads((tmp_path / "out" / "training_state.json").read_text())
    assert state["summary"]["resumed_from_step"] == 2 and state["summary"]["steps"] == 6
    resumed = load_file(str(tmp_path / "out" / "model.safetensors"))
    assert resumed.keys() == straight.keys()
    for name in straight:
        assert torch.equal(resumed[name], straight[name]), name


@LAUNCHES_RANKS
def test_the_consolidated_checkpoint_loads_in_transformers(tmp_path, tiny_model_dir, tiny_dataset):
    """Tied and untied heads: from_pretrained gives the weights one process trains, the tie kept; so do
    the snapshots, and the best validation's weights (early stopping on) are gathered as the final ones."""
    from transformers import AutoModelForCausalLM

    training = {**TRAINING, "snapshot_every": 2, "early_stopping_patience": 1}
    single_out = _single(tmp_path / "single", tiny_model_dir, tiny_dataset, "offrl", None, training)
    single = load_file(str(single_out / "model.safetensors"))
    _fpa_train(_command(tmp_path / "fsdp", tiny_model_dir, tiny_dataset, "offrl", "fsdp", None, training))
    snapshot = load_file(str(tmp_path / "fsdp" / "snapshots" / "step-00000002" / "model.safetensors"))
    single_snapshot = load_file(str(tmp_path / "single" / "work" / "snapshots" / "step-00000002" / "model.safetensors"))
    assert snapshot.keys() == single_snapshot.keys()
    for name in snapshot:
        torch.testing.assert_close(snapshot[name], single_snapshot[name], rtol=1e-5, atol=1e-5, msg=name)
    model = AutoModelForCausalLM.from_pretrained(tmp_path / "fsdp" / "out")
    tied = model.config.tie_word_embeddings
    assert (model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()) == tied
    loaded = model.state_dict()
    assert set(single) <= set(loaded)
    for name in single:
        torch.testing.assert_close(loaded[name], single[name], rtol=1e-5, atol=1e-5, msg=name)
    if not tied:
        assert not torch.equal(loaded["lm_head.weight"], loaded["model.embed_tokens.weight"])


@pytest.mark.parametrize(("key", "value", "message"), [
    ("parallel", "zero3", "training.parallel: expected one of ['ddp', 'fsdp'], got 'zero3'"),
    ("fsdp_param_dtype", "float16", "training.fsdp_param_dtype: expected one of ['auto', 'bfloat16', 'float32'], got 'float16'"),
])
def test_bad_parallel_settings_are_named_before_any_model_loads(key, value, message):
    from fpa.training.session import TrainConfig
    from fpa.training.parallel import make_parallel

    with pytest.raises(ValueError, match=re.escape(message)):
        make_parallel(TrainConfig(**{key: value}), accelerator=None)
