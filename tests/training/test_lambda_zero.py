"""FPA at λ = 0 is Off-RL through the trainer's head and losses: under the default config's dtypes
(config/config.yaml, its reference cache dtype from the plan) the gradient of every trainable parameter is
Off-RL's bit for bit, both within fp32 rounding of float64; a cache narrower than the head's products is not.

One micro-batch of toy chains (half with a slip at every step, R = +1 / −1) on a random toy model; the
reference cache written and read as the workflow does (``write_reference_cache``, ``make_reference``);
each gradient as a trainer's micro-batch takes it (decoder states, ``sequence_stats``, the objective's loss).
float64: the same model, batch and loss without a cache (FPA at λ = 0 and Off-RL are one function there).
The measured table at the default preset's shape is in docs/archive/benchmarks.md ("FPA at λ = 0")."""

import random
from pathlib import Path

import pytest
import torch
from transformers import Qwen2ForCausalLM

from fpa.objectives import get_objective
from fpa.planning import judge
from fpa.reference.cache import write_reference_cache
from fpa.reference.inputs import make_reference
from fpa.samples.prompts import render_prompt
from fpa.toy.model import model_config
from fpa.toy.settings import ToyModelConfig
from fpa.toy.task import make_problems, render_trace
from fpa.toy.tokenizer import build_tokenizer
from fpa.training import batches as B
from fpa.training.stats import sequence_stats

ROOT = Path(__file__).resolve().parents[2]
SHAPE = ToyModelConfig(d_model=64, n_heads=1, n_layers=1, d_ff=128)
PROBLEMS, K = 3, 4
# fp32 against float64 over the whole forward and backward: ~4e-6 of the largest gradient at the toy's shape
FP32_REL = 1e-4


def toy_samples(template: str, seed: int = 0) -> list[dict]:
    """``K`` samples per toy chain of 4-10 operands, even ones without a slip (R = +1), odd ones with a
    slip at every step (R = −1)."""
    rng = random.Random(seed)
    samples = []
    for i in range(PROBLEMS):
        problem = make_problems(1, seed + i, split="train", n_operands=4 + 7 * i // PROBLEMS)[0]
        for index in range(K):
            correct = index % 2 == 0
            samples.append({"id": f"{problem['id']}/{index}", "problem_id": problem["id"], "sample_index": index,
                            "prompt": render_prompt(template, problem["problem"]),
                            "completion": " " + render_trace(problem["problem"], rng, 0.0 if correct else 1.0),
                            "correct": correct, "reward": 1.0 if correct else -1.0})
    return samples


def gradient(model_dir: Path, samples: list[dict], training: dict, objective_name: str, params: dict, *,
             cache_dir: Path | None, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """∇ of the objective's loss on the micro-batch of all ``samples``, every trainable parameter's, flattened."""
    tokenizer = build_tokenizer()
    objective = get_objective(objective_name)
    lm = Qwen2ForCausalLM.from_pretrained(model_dir, dtype=dtype)
    encoded = B.encode_dataset(tokenizer, samples, training["max_length"])
    batch = B.collate(B.make_groups(samples), encoded, samples, tokenizer.pad_token_id)
    reference = make_reference(objective, "cached", reference_dir=cache_dir, model_dir=str(model_dir),
                               train_samples=samples, val_samples=[], device="cpu", diagnostics=False)
    # the decoder's final states, as decoder_hidden gives them under the toy's fp32 precision (no autocast),
    # without its cast to fp32: the float64 model stays in float64
    hidden = lm.get_decoder()(input_ids=batch.input_ids, attention_mask=batch.attention_mask).last_hidden_state
    hyper = objective.params_type(**params)
    stats = sequence_stats(hidden, lm.get_output_embeddings().weight, batch, objective, hyper,
                           reference=reference.inputs(batch, "train") if reference else None, pair_seed=0,
                           chunk_size=training["chunk_size"], head_precision=training["head_precision"])
    objective.loss(stats, hyper)[0].backward()
    return torch.cat([p.grad.flatten() for p in lm.parameters() if p.requires_grad]).double()


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """The default config's cache dtype, and per cache dtype: FPA(λ = 0)'s gradient, Off-RL's, float64's."""
    plan = judge([ROOT / "config" / "config.yaml"])
    config, training = plan.config, plan.config["training"]
    work = tmp_path_factory.mktemp("lambda_zero")
    model_dir = work / "model"
    tokenizer = build_tokenizer()
    torch.manual_seed(0)
    Qwen2ForCausalLM(model_config(SHAPE, tokenizer)).save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)
    samples = toy_samples(config["models"]["toy"]["prompt_template"])
    exact = gradient(model_dir, samples, training, "offrl", {}, cache_dir=None, dtype=torch.float64)
    off_rl = gradient(model_dir, samples, training, "offrl", {}, cache_dir=None)
    fpa = {}
    for dtype in ("bfloat16", "float32"):
        write_reference_cache(model_dir, samples, tokenizer, work / dtype, max_length=training["max_length"],
                              dtype=dtype, precision=training["precision"], batch_size=8)
        fpa[dtype] = gradient(model_dir, samples, training, "fpa", {"lam": 0.0}, cache_dir=work / dtype)
    return plan.reference.settings()["dtype"], fpa, off_rl, exact


def relative(a: torch.Tensor, b: torch.Tensor, exact: torch.Tensor) -> float:
    """max |a − b| / max |∇ float64|."""
    return float((a - b).abs().max() / exact.abs().max())


def test_fpa_at_lambda_zero_is_off_rl_bit_for_bit_under_the_default_config(measured):
    default, fpa, off_rl, exact = measured
    assert torch.equal(fpa[default], off_rl), relative(fpa[default], off_rl, exact)
    assert relative(off_rl, exact, exact) < FP32_REL and relative(fpa[default], exact, exact) < FP32_REL


def test_a_cache_narrower_than_the_products_rounds_fpas_policy_alone(measured):
    """The check above can fail: a bf16 cache under fp32 products (the default before) parts FPA(λ = 0) from
    Off-RL by bf16's rounding of z_θ, far above fp32's."""
    _, fpa, off_rl, exact = measured
    assert relative(fpa["bfloat16"], off_rl, exact) > 10 * FP32_REL
    assert relative(fpa["bfloat16"], exact, exact) > 10 * FP32_REL
