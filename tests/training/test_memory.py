"""The memory planner (fpa.memory) against what PyTorch really holds: parameter counts of real HF
models, the bytes autograd saves in a real forward, and the paper's configs against an 80 GiB GPU."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch
from transformers import AutoTokenizer

from fpa.config.runs import expand_runs
from fpa.io import read_jsonl
from fpa.planning import judge
from fpa.memory.architecture import Architecture
from fpa.memory.plan import GIB, memory_warnings, plan_memory, training_job
from fpa.memory.training import (TrainingJob, activation_bytes_per_token, checkpointed_layers, head_chunk_rows,
                                 reference_cache_dtype, training_memory)
from fpa.reference.cache import write_reference_cache
from fpa.training.session import TrainConfig, open_session

ROOT = Path(__file__).resolve().parents[2]
SHAPES = {
    "qwen2_gqa": {"model_type": "qwen2", "vocab_size": 211, "hidden_size": 128, "intermediate_size": 320,
                  "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                  "tie_word_embeddings": False},
    "qwen3_tied": {"model_type": "qwen3", "vocab_size": 97, "hidden_size": 96, "intermediate_size": 200,
                   "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32,
                   "tie_word_embeddings": True},
    "llama_mha": {"model_type": "llama", "vocab_size": 150, "hidden_size": 64, "intermediate_size": 176,
                  "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 2,
                  "tie_word_embeddings": True},
}


def _hf_model(shape: dict):
    from transformers import AutoConfig, AutoModelForCausalLM

    torch.manual_seed(0)
    return AutoModelForCausalLM.from_config(AutoConfig.for_model(**shape))


@pytest.mark.parametrize("name", SHAPES)
def test_parameter_count_is_the_models(name):
    model = _hf_model(SHAPES[name])
    counted = sum(p.numel() for p in model.parameters())  # tied weights are one parameter
    assert Architecture.from_hf(SHAPES[name], name).params == counted


def _saved_bytes_per_token(model, tokens: int, bf16: bool) -> float:
    """Bytes of the distinct non-parameter tensors autograd saves in the body's forward of a padded
    batch, per token, less autocast's bf16 copies of the weights (counted apart by the planner)."""
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    saved = {}

    def pack(tensor):
        key = tensor.untyped_storage().data_ptr()
        if key not in params:
            saved[key] = tensor.untyped_storage().nbytes()
        return tensor

    ids = torch.randint(0, model.config.vocab_size, (4, tokens // 4))
    mask = torch.ones_like(ids)
    mask[0, :3] = 0  # left padding, as every real micro-batch of unequal lengths has
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            model.get_decoder()(input_ids=ids, attention_mask=mask)
    weight_copies = 2 * model.num_parameters() - 2 * model.get_input_embeddings().weight.numel() if bf16 else 0
    norms = sum(p.numel() for name, p in model.named_parameters() if "norm" in name)
    return (sum(saved.values()) - weight_copies + 2 * norms * bf16) / tokens


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
@pytest.mark.parametrize("name", SHAPES)
def test_activation_bytes_match_what_autograd_saves(name, precision):
    model = _hf_model(SHAPES[name]).train()
    arch = Architecture.from_hf(SHAPES[name], name)
    per_token = activation_bytes_per_token(arch, precision, 64)
    expected = arch.num_hidden_layers * per_token["layer"] + per_token["model"]
    measured = _saved_bytes_per_token(model, 256, precision == "bf16")
    assert measured == pytest.approx(expected, rel=0.05), (measured, expected)


@pytest.mark.parametrize("every", [2, 3])
@pytest.mark.parametrize("name", SHAPES)
def test_selective_checkpointing_keeps_the_activations_of_the_layers_it_does_not_recompute(name, every):
    """``checkpoint_every_layers: k``: autograd saves the activations of the layers Transformers does not
    checkpoint (those inside a checkpoint are recomputed; the planner adds each one's input beside)."""
    model = _hf_model(SHAPES[name]).train()
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False}, every_n_layers=every)
    arch = Architecture.from_hf(SHAPES[name], name)
    per_token = activation_bytes_per_token(arch, "fp32", 64)
    job = TrainingJob(sequences=4, max_length=64, precision="fp32", gradient_checkpointing=True,
                      checkpoint_every_layers=every)
    kept = arch.num_hidden_layers - checkpointed_layers(arch.num_hidden_layers, job)
    measured = _saved_bytes_per_token(model, 256, bf16=False)
    assert measured == pytest.approx(kept * per_token["layer"] + per_token["model"], rel=0.05)


def test_states_are_sixteen_bytes_per_parameter_and_fsdp_shards_them():
    arch = Architecture.from_hf(SHAPES["qwen2_gqa"], "qwen2_gqa")
    one = training_memory(arch, TrainingJob(sequences=1, max_length=8))
    ddp = training_memory(arch, TrainingJob(sequences=1, max_length=8, world=4))
    fsdp = training_memory(arch, TrainingJob(sequences=1, max_length=8, world=4, parallel="fsdp"))
    assert one["weights"] + one["gradients"] + one["optimizer"] == 16 * arch.params
    assert ddp["ddp_buckets"] == 4 * arch.params and one["ddp_buckets"] == 0
    assert fsdp["weights"] + fsdp["gradients"] + fsdp["optimizer"] == 16 * arch.params // 4
    offload = training_memory(arch, TrainingJob(sequences=1, max_length=8, world=4, parallel="fsdp", cpu_offload=True))
    assert offload["weights"] == offload["optimizer"] == offload["gradients"] == 0


@pytest.mark.parametrize("tie", [False, True], ids=["untied", "tied"])
def test_fsdp_at_world_one_holds_one_gathered_layer_and_the_root_not_the_whole_model(tie):
    """``parallel: fsdp`` in one process (FSDP2 over a world of 1, as users_step runs): the bytes of the
    unsharded weights, summed at every decoder layer's forward and backward, peak at what the planner
    counts (one bf16 layer in flight and the root), not at DDP's bf16 copy of every layer."""
    from torch.distributed.tensor import DTensor

    from fpa.training.parallel import FullyShardedDataParallel, Policy

    shape = {**SHAPES["qwen3_tied"], "num_hidden_layers": 6, "tie_word_embeddings": tie}
    arch = Architecture.from_hf(shape, "qwen3_six")
    policy, _ = FullyShardedDataParallel(None, TrainConfig(precision="bf16", parallel="fsdp")).prepare(
        Policy(_hf_model(shape), torch.bfloat16), lambda weights: None)
    held = []

    def unsharded_bytes(*_):
        held.append(sum(p.numel() * p.element_size() for p in policy.parameters() if not isinstance(p, DTensor)))

    for layer in policy.lm.get_decoder().layers:
        layer.mlp.register_forward_hook(unsharded_bytes)
        layer.mlp.down_proj.register_full_backward_pre_hook(unsharded_bytes)
    ids = torch.randint(0, arch.vocab_size, (2, 16))
    policy(ids, None, lambda hidden, weight: (hidden @ weight.float().T).logsumexp(-1).sum()).backward()
    job = TrainingJob(sequences=2, max_length=16, parallel="fsdp", gathered_element=2)
    assert len(held) == 2 * arch.num_hidden_layers
    assert max(held) == training_memory(arch, job)["unsharded_weights"]
    assert max(held) < training_memory(arch, TrainingJob(sequences=2, max_length=16))["unsharded_weights"]


def test_head_chunk_is_the_largest_power_of_two_within_the_budget():
    assert head_chunk_rows(3 * 4 * 151_936 * 512, 151_936, 3) == 512
    assert head_chunk_rows(3 * 4 * 151_936 * 1023, 151_936, 3) == 512
    assert head_chunk_rows(2**30, 151_936, 3) == 512
    assert head_chunk_rows(2**30, 151_936, 2) == 512
    assert head_chunk_rows(2**30, 151_936, 1) == 1024
    assert head_chunk_rows(1, 151_936, 1) == 1


@pytest.mark.parametrize("objective, reference, rows", [("offrl", "cached", 16), ("fpa", "cached", 8),
                                                        ("fpa", "online", 4)])
def test_the_planner_budgets_the_head_chunk_the_trainer_takes(tmp_path, toy_model_dir, tiny_dataset, objective,
                                                             reference, rows):
    """``chunk_size: auto`` within 16 rows of one [chunk, V] fp32 buffer: each objective's chunk holds the
    buffers its head call holds (Off-RL 1, FPA on the cache 2, FPA online 3), the trainer's and the planner's."""
    config = judge([ROOT / "config" / "config.yaml"]).config
    arch = Architecture.from_model_dir(toy_model_dir)
    training = {"chunk_size": "auto", "head_memory_mb": 16 * 4 * arch.vocab_size / 2**20, "reference": reference}
    config["training"].update(training)
    run = expand_runs(config)[("toy", objective)]
    samples = [*read_jsonl(tiny_dataset / "train.jsonl"), *read_jsonl(tiny_dataset / "val.jsonl")]
    write_reference_cache(toy_model_dir, samples, AutoTokenizer.from_pretrained(toy_model_dir), tmp_path / "cache",
                          max_length=128)
    session, _ = open_session(str(toy_model_dir), str(tiny_dataset / "train.jsonl"),
                              str(tiny_dataset / "val.jsonl"), str(tmp_path / "cache"), objective, run.params,
                              TrainConfig.from_dict({**training, "max_length": 128}), seed=3)
    assert session.cfg.chunk_size == training_job(config, run, arch, 1).chunk_size == rows


def test_paper_grid_7b_needs_fsdp_on_80_gb():
    plan = judge([ROOT / "config" / "paper.yaml"])
    config = plan.config
    shipped = plan_memory(config, plan.runs, 80 * GIB, ROOT / "no-such-dir")
    assert all(e.fits for e in shipped if e.rule == "train")  # the paper configs train with FSDP
    config["training"]["parallel"] = "ddp"
    runs = expand_runs(config)
    estimates = {(e.model, e.run): e for e in plan_memory(config, runs, 80 * GIB, ROOT / "no-such-dir")
                 if e.rule == "train"}
    seven_b = estimates[("qwen2.5-math-7b", "offrl")]
    assert not seven_b.fits and seven_b.suggestion.startswith("parallel: fsdp")
    arch = Architecture.from_hf(config["models"]["qwen2.5-math-7b"]["architecture"], "7b")
    assert 7.5e9 < arch.params < 7.7e9  # Qwen2.5-7B: 7.62 B parameters
    fsdp = training_job(config, runs[("qwen2.5-math-7b", "offrl")], arch, 2, parallel="fsdp")
    assert training_memory(arch, fsdp)["peak"] < seven_b.per_gpu / 2
    warnings = memory_warnings(config, runs, ROOT / "no-such-dir")
    assert any(line.startswith("memory: train qwen2.5-math-7b ") and "fits with parallel: fsdp" in line
               for line in warnings)


def test_plan_memory_command_prints_the_table():
    out = subprocess.run([sys.executable, "-m", "fpa", "plan-memory", "config/paper.yaml"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    row = next(line for line in out.splitlines() if line.startswith("| train | qwen2.5-math-7b |"))
    assert "| fsdp |" in row and "(ddp 171" in row and row.endswith("| yes |")
    small = subprocess.run([sys.executable, "-m", "fpa", "plan-memory", "config/paper.yaml", "--gpu-memory-gb", "40"],
                           cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert "| train | qwen2.5-math-7b |" in small and "**no**: parallel: fsdp, gradient_checkpointing: true, gpu: " in small


def test_a_training_jobs_world_is_its_nodes_times_its_gpus_per_node():
    plan = judge([ROOT / "config" / "paper.yaml"])
    config, runs = plan.config, plan.runs

    def trains(**train):
        config["resources"]["train"].update(train)
        return {(e.model, e.run): e for e in plan_memory(config, runs, 80 * GIB, ROOT / "no-such-dir")
                if e.rule == "train"}

    two_nodes, one_node, one_gpu = trains(nodes=2, gpu=1), trains(nodes=1, gpu=2), trains(nodes=1, gpu=1)
    for key, estimate in two_nodes.items():
        assert estimate.gpus == 2
        assert estimate.components == one_node[key].components != one_gpu[key].components


@pytest.mark.parametrize(("head_precision", "device", "expected"), [
    ("auto", "cuda", "bfloat16"), ("auto", "cpu", "float32"), ("bf16", "cpu", "bfloat16"),
    ("tf32", "cuda", "float32"), ("fp32", "cuda", "float32")])
def test_the_reference_cache_stores_z_ref_as_the_heads_products_take_it(head_precision, device, expected):
    """bf16 products round z_θ and z_ref alike for every objective; fp32 and TF32 ones take fp32 states (a bf16
    cache there would round FPA's z_θ, not Off-RL's: tests/training/test_lambda_zero.py)."""
    assert reference_cache_dtype({"head_precision": head_precision}, device) == expected
