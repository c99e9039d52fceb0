"""FPA at λ = 0 against Off-RL: the gradients of the trainable parameters under the default config's dtypes,
each reference cache dtype beside, against float64.

    python benchmarks/numerics/lambda_zero.py    # writes results/lambda_zero.json (under a minute, 2 cores)

The toy's shapes: the default preset's model (d = 128, 2 layers, the toy tokenizer's vocabulary), its
weights drawn at random (seeded: the rounding is measured, not what a model learnt), and one micro-batch
of the default config (8 problems x K = 8 samples of chains of 4-10 operands, half of them with a slip
at every step, R = +1 / −1). The reference cache is written and read as the workflow does
(``write_reference_cache``, ``make_reference``), in bfloat16 (what rule ``cache_reference`` stored before:
the command's default) and in float32, and the default config's plan names the one it now stores
(``plan.reference.dtype``). Each gradient is a trainer's micro-batch: the decoder's final hidden states, the
chunked head and per-sequence sums (``sequence_stats``), the objective's loss and its backward. float64:
the same model, batch and loss in float64 without a cache (FPA at λ = 0 and Off-RL are one function there).
Differences over every trainable parameter's gradient: max |Δ| and max |Δ| / max |∇ float64|.
"""

from __future__ import annotations

import argparse
import random
import tempfile
from pathlib import Path

import torch
from transformers import Qwen2ForCausalLM

from fpa.data.prompts import render_prompt
from fpa.io import write_json
from fpa.objectives import get_objective
from fpa.planning import judge
from fpa.provenance.cpu import cpu_facts
from fpa.reference.cache import write_reference_cache
from fpa.reference.inputs import make_reference
from fpa.toy.model import model_config
from fpa.toy.settings import TOY_PRESETS, ToyModelConfig
from fpa.toy.task import make_problems, render_trace
from fpa.toy.tokenizer import build_tokenizer
from fpa.training import batches as B
from fpa.training.stats import sequence_stats

ROOT = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).resolve().parent / "results"
CACHE_DTYPES = ("bfloat16", "float32")
#: what rule cache_reference stored before the plan chose the dtype (the command's default, whatever the products)
DEFAULT_BEFORE = "bfloat16"


def default_config() -> dict:
    """config/config.yaml, validated with the schema's defaults filled, and its plan's cache dtype."""
    plan = judge([ROOT / "config" / "config.yaml"])
    config = plan.config
    return {"training": config["training"], "prompt_template": config["models"]["toy"]["prompt_template"],
            "cache_dtype": plan.reference.dtype()}


def toy_samples(problems: int, k: int, template: str, seed: int = 0) -> list[dict]:
    """``k`` samples per toy chain of 4-10 operands, even ones without a slip (R = +1), odd ones with a
    slip at every step (R = −1)."""
    rng = random.Random(seed)
    samples = []
    for i in range(problems):
        problem = make_problems(1, seed + i, split="train", n_operands=4 + 7 * i // problems)[0]
        for index in range(k):
            correct = index % 2 == 0
            samples.append({"id": f"{problem['id']}/{index}", "problem_id": problem["id"], "sample_index": index,
                            "prompt": render_prompt(template, problem["problem"]),
                            "completion": " " + render_trace(problem["problem"], rng, 0.0 if correct else 1.0),
                            "correct": correct, "reward": 1.0 if correct else -1.0})
    return samples


def save_model(directory: Path, shape: ToyModelConfig, seed: int = 0) -> None:
    tokenizer = build_tokenizer()
    torch.manual_seed(seed)
    Qwen2ForCausalLM(model_config(shape, tokenizer)).save_pretrained(directory)
    tokenizer.save_pretrained(directory)


def gradient(model_dir: Path, samples: list[dict], training: dict, objective_name: str, params: dict, *,
             cache_dir: Path | None, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """∇ of the objective's loss on the micro-batch of all ``samples``, every trainable parameter's, flattened."""
    tokenizer = build_tokenizer()
    objective = get_objective(objective_name)
    hyper = objective.params_type(**params)
    lm = Qwen2ForCausalLM.from_pretrained(model_dir, dtype=dtype)
    encoded = B.encode_dataset(tokenizer, samples, training["max_length"])
    groups = B.make_groups(samples)
    batch = B.collate(groups, encoded, samples, tokenizer.pad_token_id)
    reference = make_reference(objective, "cached", reference_dir=cache_dir, model_dir=str(model_dir),
                               train_samples=samples, val_samples=[], device="cpu", diagnostics=False)
    inputs = reference.inputs(batch, "train") if reference else None
    # the decoder's final states, as decoder_hidden gives them under the toy's fp32 precision (no autocast),
    # without its cast to fp32: the float64 model stays in float64
    hidden = lm.get_decoder()(input_ids=batch.input_ids, attention_mask=batch.attention_mask).last_hidden_state
    stats = sequence_stats(hidden, lm.get_output_embeddings().weight, batch, objective, hyper, reference=inputs,
                           pair_seed=0, chunk_size=training["chunk_size"], head_precision=training["head_precision"])
    objective.loss(stats, hyper)[0].backward()
    return torch.cat([p.grad.flatten() for p in lm.parameters() if p.requires_grad]).double()


def difference(a: torch.Tensor, b: torch.Tensor, scale: float) -> dict:
    """max |a − b|, relative to ``scale`` (max |∇ float64|), and whether a equals b bit for bit."""
    largest = float((a - b).abs().max())
    return {"max_abs": largest, "max_rel": largest / scale, "bitwise_equal": bool(torch.equal(a, b))}


def lambda_zero_gradients(work: Path, shape: ToyModelConfig, problems: int, k: int, config: dict) -> dict:
    """FPA(λ = 0) − Off-RL and each against float64, per reference cache dtype."""
    model_dir = work / "model"
    save_model(model_dir, shape)
    samples = toy_samples(problems, k, config["prompt_template"])
    training = config["training"]
    exact = gradient(model_dir, samples, training, "offrl", {}, cache_dir=None, dtype=torch.float64)
    scale = float(exact.abs().max())
    off_rl = gradient(model_dir, samples, training, "offrl", {}, cache_dir=None)
    out = {"max_abs_float64_gradient": scale, "caches": {}}
    for dtype in CACHE_DTYPES:
        cache_dir = work / f"cache-{dtype}"
        write_reference_cache(model_dir, samples, build_tokenizer(), cache_dir, max_length=training["max_length"],
                              dtype=dtype, precision=training["precision"], batch_size=8)
        fpa = gradient(model_dir, samples, training, "fpa", {"lam": 0.0}, cache_dir=cache_dir)
        out["caches"][dtype] = {"fpa_minus_offrl": difference(fpa, off_rl, scale),
                                "offrl_minus_float64": difference(off_rl, exact, scale),
                                "fpa_minus_float64": difference(fpa, exact, scale)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=8, help="the default config's micro_batch_problems")
    parser.add_argument("--k", type=int, default=8, help="samples per problem (dataset.k)")
    parser.add_argument("--out", type=Path, default=RESULTS / "lambda_zero.json")
    args = parser.parse_args()
    torch.set_num_threads(2)
    config = default_config()
    shape = TOY_PRESETS["default"]
    with tempfile.TemporaryDirectory() as work:
        measured = lambda_zero_gradients(Path(work), shape, args.problems, args.k, config)
    record = {"benchmark": "lambda_zero", "problems": args.problems, "k": args.k,
              "model": {"d_model": shape.d_model, "n_layers": shape.n_layers, "d_ff": shape.d_ff},
              "training": {key: config["training"][key] for key in ("precision", "head_precision", "chunk_size")},
              "default_cache_dtype": config["cache_dtype"], "default_before": DEFAULT_BEFORE, "cpu": cpu_facts(),
              "torch": torch.__version__, **measured}
    write_json(args.out, record)
    print(markdown(record))


def markdown(record: dict) -> str:
    """The record as the table of benchmarks/numerics/README.md: a row per reference cache dtype."""
    model, training = record["model"], record["training"]
    lines = [f"Gradients of every trainable parameter on one micro-batch ({record['problems']} problems x K = "
             f"{record['k']}) of the toy's model shape (d = {model['d_model']}, {model['n_layers']} layers, random "
             f"weights), precision {training['precision']}, head_precision {training['head_precision']} (fp32 "
             f"products on the CPU); {record['cpu']['model']}, torch {record['torch']}. Max |Δ| (relative: / max "
             f"|∇ float64| = {record['max_abs_float64_gradient']:.2e}); the default config's plan stores the cache in "
             f"{record['default_cache_dtype']}.", "",
             "| reference cache | FPA(λ = 0) − Off-RL | bit for bit | Off-RL − float64 | FPA(λ = 0) − float64 |",
             "|---|---|---|---|---|"]
    for dtype, row in record["caches"].items():
        cells = [f"{row[name]['max_abs']:.2e} ({row[name]['max_rel']:.1e})"
                 for name in ("fpa_minus_offrl", "offrl_minus_float64", "fpa_minus_float64")]
        default = {record["default_before"]: " (the default before)", record["default_cache_dtype"]: " (the default)"
                   }.get(dtype, "")
        equal = "yes" if row["fpa_minus_offrl"]["bitwise_equal"] else "no"
        lines.append(f"| {dtype}{default} | {cells[0]} | {equal} | {cells[1]} | {cells[2]} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
