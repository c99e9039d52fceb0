"""HF-backend sampling: the block-drawn Gumbel-max sampler against per-step ``torch.multinomial``.

    python benchmarks/sampling.py --model results/models/toy/base   # the default run's base model
    python benchmarks/sampling.py                                   # builds the CI toy model first
    python benchmarks/sampling.py --problems 300 --reps 1           # smoke run

Both sides are ``fpa.generation.hf.HFBackend`` sampling toy-benchmark prompts (n = 1, T = 0.7,
160 new tokens, batch 256, 1 thread), as ``fpa evaluate`` samples them; only the logits
processor differs:

  per-step multinomial  each row's token drawn by ``torch.multinomial(p, 1, generator)``, one
                        call per row and step (the sampler before this benchmark was written)
  block noise (ours)    ``SeededSampler``: each row's Exp(1) noise drawn per block of steps,
                        argmax(p / q) for all rows at once

The completions must be identical (asserted): the two compute the same draws. Sides alternate
over ``--reps``; wall s is what a user waits, CPU s is the process's user + sys time, which
other jobs on shared cores do not inflate. Results go to benchmarks/results/sampling.json.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import torch
from transformers import LogitsProcessor

from fpa.data.prompts import render_prompt
from fpa.generation import hf
from fpa.toy.model import TOY_PRESETS, build_toy_model
from fpa.toy.task import DEFAULT_PROMPT_TEMPLATE, make_problems

OUT = Path(__file__).resolve().parent / "results" / "sampling.json"


class PerStepMultinomial(LogitsProcessor):
    """The reference: one ``torch.multinomial`` call per row and step."""

    def __init__(self, generators: list[torch.Generator], temperature: float):
        self.generators = generators
        self.temperature = temperature

    def __call__(self, input_ids, scores):
        probs = torch.softmax(scores.float() / self.temperature, dim=-1)
        choice = torch.stack([torch.multinomial(p, 1, generator=g) for p, g in zip(probs, self.generators)])
        return torch.full_like(scores, float("-inf")).scatter_(1, choice, 0.0)


SIDES = {"per-step multinomial": PerStepMultinomial, "block noise (ours)": hf.SeededSampler}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=None, help="HF model directory (default: build the CI toy model)")
    parser.add_argument("--problems", type=int, default=1500, help="toy prompts (toy8's size)")
    parser.add_argument("--operands", type=int, default=8)
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--out", default=str(OUT))
    return parser.parse_args(argv)


def timed_generate(backend: hf.HFBackend, sampler: type, prompts: list[str]) -> tuple[list, float, float]:
    hf.SeededSampler, original = sampler, hf.SeededSampler
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        completions = backend.generate(prompts, n=1, temperature=0.7, max_new_tokens=160, seed=42)
        return completions, time.perf_counter() - wall, time.process_time() - cpu
    finally:
        hf.SeededSampler = original


def main(argv=None) -> None:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        model = args.model
        if model is None:
            model = os.path.join(scratch, "toy")
            build_toy_model(model, TOY_PRESETS["ci"], threads=1)
        prompts = [render_prompt(DEFAULT_PROMPT_TEMPLATE, record["problem"])
                   for record in make_problems(args.problems, seed=7, n_operands=args.operands)]
        backend = hf.HFBackend(model, batch_size=256, threads=1)
        print(f"model {model}; {len(prompts)} prompts x 1 sample; load average {os.getloadavg()[0]:.1f}")
        times = {side: {"wall_s": [], "cpu_s": []} for side in SIDES}
        outputs = {}
        for _ in range(args.reps):
            for side, sampler in SIDES.items():
                outputs[side], wall, cpu = timed_generate(backend, sampler, prompts)
                times[side]["wall_s"].append(wall)
                times[side]["cpu_s"].append(cpu)
    reference, ours = outputs.values()
    if reference != ours:
        raise SystemExit(f"completions differ in {sum(a != b for a, b in zip(reference, ours))} of {len(prompts)} rows")
    best = {side: {key: min(values) for key, values in entry.items()} for side, entry in times.items()}
    base = best["per-step multinomial"]
    print(f"\ncompletions identical: {len(prompts)} of {len(prompts)}; best of {args.reps}; "
          f"load average {os.getloadavg()[0]:.1f}\n")
    print("| sampler | wall s | CPU s | CPU ratio |")
    print("|---|---:|---:|---:|")
    for side, entry in best.items():
        print(f"| {side} | {entry['wall_s']:.2f} | {entry['cpu_s']:.2f} | {entry['cpu_s'] / base['cpu_s']:.2f} |")
    Path(args.out).write_text(json.dumps({"model": str(args.model or "toy ci preset"), "prompts": len(prompts),
                                          "reps": args.reps, "best": best, "all": times}, indent=2) + "\n")


if __name__ == "__main__":
    main()
