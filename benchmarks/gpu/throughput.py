"""What a user's training step costs on one GPU: config/paper.yaml's ``training:`` as it is (FSDP2 at
world 1, bf16 compute over fp32 masters, gradient checkpointing, the head's chunk from its memory
budget, each micro-batch packed without padding: ``training.attention``'s default), on a length mix like
MATH's; tokens/s, MFU, peak memory and FPA / Off-RL per round, every round on one batch that each side
met in its warm-up; the padded ``causal`` layout and the body's faster settings beside it; the cost of
``training.deterministic``.

    python benchmarks/gpu/throughput.py --write-lengths   # math_lengths.json from the MATH mirror (CPU)

Lengths: ``math_lengths.json`` holds the UTF-8 byte lengths of every MATH training record's prompt
(config/paper.yaml's template around the problem) and of its reference solution, from
``$FPA_DATA_MIRROR/math/train.jsonl.gz`` (the file's sha256 beside them). The benchmark's tokenizer
is the toy byte-level one (one token a byte), so a sample of those lengths is that many tokens. A
human solution stands in for a model's completion: the lengths' spread and padding are MATH's, their
scale is bytes, not Qwen tokens. Each problem's K samples take its prompt and K solutions' lengths
drawn at random, each sample cut to ``max_length``.

MFU = model FLOPs / (seconds x the GPU's peak), model FLOPs of a step counted from the real
(unpadded) tokens: 6 N_body T + 6 V d C + 6 L (heads x head_dim) sum_i s_i^2, where N_body is the
decoder's matmul and norm weights, T the step's tokens, C its completion tokens (the loss head runs
on those only), s_i each sequence's length (causal attention: half of PaLM's 12 L H Q T^2 term).
Checkpointing's recomputation, the padding and FPA's extra reference head product are not model
FLOPs: they show as lower MFU. The peak is the planner's (``fpa.memory.cost.Assumptions``).
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import random
import sys
from pathlib import Path

import torch

if __name__ == "__main__":  # run as a script: benchmarks/ on the path, as run.py puts it
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpu.budget import free_device_memory  # noqa: E402
from gpu.clock import paired_rounds, ratio_spread  # noqa: E402
from gpu.models import PAPER_GPUS, Shape, paper_config, paper_overhead, sample  # noqa: E402
from gpu.training import (  # noqa: E402
    fsdp_resume, method_params, offrl_beside, optimizer_steps, prepare_training_dir, python_child, unfit_reason)
from shared.harness import ascii_text  # noqa: E402
from shared.rounds import paired_ratio, spread  # noqa: E402

from fpa.io import atomic_path, sha256_path  # noqa: E402
from fpa.training.body import CUBLAS_WORKSPACE  # noqa: E402

LENGTHS = Path(__file__).resolve().parent / "math_lengths.json"
#: the body's faster settings, each beside config/paper.yaml's training as it is
VARIANTS = {"configured": {}, "causal": {"attention": "causal"},
            "tuned": {"attention": "causal", "compile_layers": True, "checkpoint_every_layers": 2}}
#: the tiny CPU run leaves out the compiled variant: Inductor's CPU compile takes minutes on two cores
#: (tests/training/test_body.py checks the compiled layers against the eager ones)
TINY_VARIANTS = {name: overrides for name, overrides in VARIANTS.items() if not overrides.get("compile_layers")}
#: the sides of a variant in paired_rounds' order: round r starts with METHODS[r % 2] (shared.rounds.rotated)
METHODS = ("fpa", "offrl")
#: the global step whose batch every warm-up and timed step of a variant runs
TIMED_STEP = 0


def write_math_lengths(mirror: Path, out: Path = LENGTHS) -> dict:
    """Prompt and solution byte lengths of every MATH training record of ``mirror``, into ``out``."""
    from fpa.samples.prompts import render_prompt

    source = mirror / "math" / "train.jsonl.gz"
    template = paper_config()["models"]["qwen3-4b-base"]["prompt_template"]
    with gzip.open(source, "rt", encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle]
    lengths = {"source": "math/train.jsonl.gz", "sha256": sha256_path(source), "unit": "UTF-8 bytes",
               "prompt": [len(render_prompt(template, r["problem"]).encode()) for r in records],
               "completion": [len(r["solution"].encode()) for r in records]}
    with atomic_path(out) as tmp:  # one line: 15,000 numbers
        tmp.write_text(json.dumps(lengths, separators=(",", ":")) + "\n")
    return lengths


def math_samples(shape: Shape, problems: int, scale: float, seed: int = 0) -> list[dict]:
    """``problems`` groups of ``shape.sequences`` samples with MATH's lengths (times ``scale``, cut to
    ``shape.max_length``), half of each group correct."""
    lengths = json.loads(LENGTHS.read_text())
    rng = random.Random(seed)
    size = lambda n, cap: max(1, min(cap, round(n * scale)))  # noqa: E731
    samples = []
    for p in range(problems):
        prompt = ascii_text(rng, size(rng.choice(lengths["prompt"]), shape.max_length // 2))
        samples += [sample(p, k, prompt, ascii_text(rng, size(rng.choice(lengths["completion"]),
                                                               shape.max_length - len(prompt) - 1)))
                    for k in range(shape.sequences)]
    return samples


def model_flops(shape: Shape, lengths: list[int], completion_tokens: int) -> float:
    """The model FLOPs of one training step over sequences of ``lengths`` (the module's formula)."""
    arch = shape.architecture
    body = arch.num_hidden_layers * arch.layer_params + arch.hidden_size
    attention = 6 * arch.num_hidden_layers * arch.q_width * sum(s * s for s in lengths)
    return 6 * body * sum(lengths) + 6 * arch.embedding_params * completion_tokens + attention


def step_shapes(run, steps: int) -> list[dict]:
    """Real tokens, squared lengths, completion and padded tokens of the first ``steps`` optimizer steps."""
    from fpa.training import batches as B

    out = []
    for step in range(steps):
        groups = B.global_batch(run.train.groups, step, batch_problems=run.cfg.batch_problems, seed=run.seed)
        micros = B.micro_batches(groups, run.cfg.micro_batch_problems)
        lengths = [len(run.train.encoded[i].input_ids) for i in B.sample_indices(groups)]
        padded = sum(len(B.sample_indices(m)) * max(len(run.train.encoded[i].input_ids) for i in
                                                    B.sample_indices(m)) for m in micros)
        out.append({"lengths": lengths, "completion": sum(run.train.encoded[i].completion_len
                                                          for i in B.sample_indices(groups)), "padded": padded})
    return out


def _method_figures(shape: Shape, entries: list[dict], step: dict, peak_tflops: float) -> dict:
    """Per method: examples/s, tokens/s and MFU per round, each round's step on ``step``'s batch."""
    peaks = [e["peak_bytes"] for e in entries if e["peak_bytes"] is not None]
    flops = model_flops(shape, step["lengths"], step["completion"])
    return {"examples_per_s": spread([len(step["lengths"]) / e["s"] for e in entries]),
            "tokens_per_s": spread([sum(step["lengths"]) / e["s"] for e in entries]),
            "mfu": spread([flops / (e["s"] * peak_tflops * 1e12) for e in entries]),
            "step_s": [e["s"] for e in entries], "peak_gib": max(peaks) / 2**30 if peaks else None}


def variant_training(shape: Shape, problems_per_step: int, overrides: dict) -> dict:
    """config/paper.yaml's training under FSDP2 at world 1, one problem a micro-batch, with ``overrides``."""
    return {**shape.training, "parallel": "fsdp", "batch_problems": problems_per_step, "micro_batch_problems": 1,
            **overrides}


def user_path(shape: Shape, model: str, files: dict, device, rounds: int, training: dict) -> dict:
    """One variant, trained as ``training`` says: FPA and Off-RL paired per round."""
    from fpa.memory.cost import Assumptions
    from fpa.training.session import TrainConfig, open_session

    free_device_memory()
    run, _ = open_session(files["model"], files["train"], files["val"], files["cache"], "fpa",
                          method_params(model, "fpa"), TrainConfig.from_dict(training), seed=42)
    run.body.train()
    # every step of either method, its warm-up included, is global step TIMED_STEP's: each side meets the batch's
    # packed shapes in its warm-up, so no timed step is the first on them (the H100's call 5 timed a new batch a
    # round, and whichever side ran it first was the slow one)
    timed = paired_rounds({name: optimizer_steps(each, {"step": TIMED_STEP}, repeat=True) for name, each in
                           zip(METHODS, (run, offrl_beside(run, files, model)))}, rounds, device)
    step = step_shapes(run, TIMED_STEP + 1)[TIMED_STEP]
    waited = run.reference.reads_waited  # FPA's reads of reference rows no step asked for ahead
    peak = Assumptions().peak_tflops
    result = {"training": {k: run.cfg.__dict__[k] for k in ("precision", "parallel", "gradient_checkpointing",
                                                              "checkpoint_every_layers", "compile_layers",
                                                              "attention", "adamw", "chunk_size", "deterministic")},
              "peak_tflops": peak, "methods": {}, "first_loss": timed["warm_results"],
              "ratio_time_fpa_over_offrl": ratio_spread(timed["rounds"], "fpa", "offrl"),
              "padding_share": 0.0 if run.cfg.attention == "packed" else 1 - sum(step["lengths"]) / step["padded"],
              "mean_tokens_per_example": sum(step["lengths"]) / len(step["lengths"]),
              "fpa_reference_reads_waited": waited}
    for name, entries in timed["rounds"].items():
        result["methods"][name] = _method_figures(shape, entries, step, peak)
    del run
    return result


def prepare(shape: Shape, work: Path, device, problems_per_step: int, steps: int, scale: float) -> dict:
    """Model dir, MATH-length data for ``steps`` steps of ``problems_per_step`` problems, and its cache."""
    return prepare_training_dir(shape, work, device, math_samples(shape, problems_per_step * steps, scale))


def users_step(shape: Shape, model: str, work: Path, device, rounds: int, problems_per_step: int, gpu_bytes: int,
               variants: dict = VARIANTS) -> dict:
    """Every variant on the same data, the paper beside: one the memory planner says cannot fit ``gpu_bytes``
    is skipped with its line before the data is written (at max_length: the data holds samples at the cap);
    a failing variant is recorded and the next runs."""
    trainings = {name: variant_training(shape, problems_per_step, overrides) for name, overrides in variants.items()}
    unfit = {name: unfit_reason(shape, training, gpu_bytes) for name, training in trainings.items()}
    paper_max = paper_config()["training"]["max_length"]
    files = (prepare(shape, work, device, problems_per_step, TIMED_STEP + 1, shape.max_length / paper_max)
             if None in unfit.values() else None)
    result = {"shape": shape.name, "world": 1, "rounds": rounds, "timed_step": TIMED_STEP,
              "problems_per_step": problems_per_step,
              "examples_per_step": problems_per_step * shape.sequences, "lengths": _lengths_note(), "variants": {}}
    for name, training in trainings.items():
        if unfit[name]:
            result["variants"][name] = {"skipped": unfit[name]}
            continue
        try:
            result["variants"][name] = user_path(shape, model, files, device, rounds, training)
        except Exception as error:  # noqa: BLE001 -- one variant's failure (a compile error) keeps the others
            result["variants"][name] = {"error": f"{type(error).__name__}: {error}"[:2000]}
    configured = result["variants"]["configured"]
    if "methods" in configured:
        result["paper"] = paper_beside(configured)
        result["planner_train_mfu"] = configured["methods"]["offrl"]["mfu"]["median"]
    return result


def paper_beside(variant: dict) -> dict:
    """The paper's examples/s per GPU (its 2 H200) beside ours, and the tokens/s it implies at our mean length."""
    paper = paper_overhead()
    out = {}
    for name, figures in variant["methods"].items():
        per_gpu = paper[name][0] / PAPER_GPUS
        out[name] = {"paper_examples_per_s_per_gpu": per_gpu, "ours_examples_per_s": figures["examples_per_s"]["median"],
                     "paper_tokens_per_s_per_gpu_at_our_mean_length": per_gpu * variant["mean_tokens_per_example"],
                     "ours_tokens_per_s": figures["tokens_per_s"]["median"],
                     "paper_peak_gb": paper[name][1], "ours_peak_gib": figures["peak_gib"]}
    return out


def _lengths_note() -> dict:
    lengths = json.loads(LENGTHS.read_text())
    return {k: lengths[k] for k in ("source", "sha256", "unit")} | {
        "mean_prompt": sum(lengths["prompt"]) / len(lengths["prompt"]),
        "mean_completion": sum(lengths["completion"]) / len(lengths["completion"])}


def deterministic_cost(shape: Shape, narrow: Shape, model: str, work: Path, device, rounds: int,
                       problems_per_step: int, gpu_bytes: int) -> dict:
    """``training.deterministic`` in a fresh process (cuBLAS reads its workspace setting once, and the switch
    is process-wide): the configured path's Off-RL step time without and then with it at ``shape``, each
    its own session on the same data, the ratio taken per round index (sequential, not interleaved: the
    switch cannot be turned off within the process), and a checkpoint-kill-resume at ``narrow`` under
    it, bit-identical or not (``training.fsdp_resume``). Both sides run with cuBLAS's fixed workspace."""
    code = ("import json, sys; from gpu import throughput; "
            "print(json.dumps(throughput._deterministic_child(*json.loads(sys.argv[1]))))")
    args = [dataclasses.asdict(shape), dataclasses.asdict(narrow), model, str(work), str(device), rounds,
            problems_per_step, gpu_bytes]
    return python_child(code, args, "the deterministic run", {"CUBLAS_WORKSPACE_CONFIG": CUBLAS_WORKSPACE})


def _shape(fields: dict) -> Shape:
    from fpa.memory.architecture import Architecture

    return Shape(**{**fields, "architecture": Architecture(**fields["architecture"])})


def _deterministic_child(shape: dict, narrow: dict, model: str, work: str, device: str, rounds: int,
                         problems_per_step: int, gpu_bytes: int) -> dict:
    variants = {"configured": {}, "deterministic": {"deterministic": True}}  # in this order: the switch stays on
    timed = users_step(_shape(shape), model, Path(work) / "timed", torch.device(device), rounds, problems_per_step,
                       gpu_bytes, variants)
    resume = fsdp_resume(_shape(narrow), Path(work) / "resume", torch.device(device), steps=2, stop=1,
                                  overrides={"deterministic": True})
    steps = {name: v["methods"]["offrl"]["step_s"] for name, v in timed["variants"].items() if "methods" in v}
    ratio = paired_ratio(steps["deterministic"], steps["configured"]) if len(steps) == 2 else None
    return {"resume": resume, "variants": timed["variants"], "offrl_step_ratio_deterministic_over_configured": ratio}


if __name__ == "__main__":
    mirror = Path(os.environ.get("FPA_DATA_MIRROR", "/work/shared/data"))
    if sys.argv[1:] != ["--write-lengths"]:
        raise SystemExit(__doc__.split("\n\n")[1])
    written = write_math_lengths(mirror)
    print(f"{LENGTHS}: {len(written['prompt'])} records of {written['source']} ({written['sha256'][:12]})")
