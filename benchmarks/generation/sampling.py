"""HF-backend sampling: the slot decoder against ``model.generate`` with the seeded sampler it replaced.

    python benchmarks/generation/sampling.py --model results/models/toy/base   # the default run's base model
    python benchmarks/generation/sampling.py                                   # builds the CI toy model first
    python benchmarks/generation/sampling.py --problems 300 --rounds 1         # smoke run

Both sides sample toy-benchmark prompts (n = 1, T = 0.7, 160 new tokens, 1 thread) as
``fpa evaluate`` samples them, from the same loaded model and the same per-row seeds
(``fpa.generation.hf.row_seed``):

  model.generate (before)  ``GenerateReference``: rows sorted by prompt length, left-padded
                           batches of ``--batch`` rows, Transformers' ``generate`` with its
                           DynamicCache; ``SeededSampler`` draws each row's token from the
                           row's generator (block-drawn Exp(1) noise, argmax(p / q))
  slot decoder (ours)      ``fpa.generation.hf.HFBackend``: ``SlotDecoder``, a preallocated
                           cache of ``--batch`` slots, slots refilled as rows stop
                           (``decode_steps.py`` counts its steps)

The completions of every side must equal the reference's (asserted). Each round runs every
side once, in an order that alternates between rounds; CPU s is the process's user + sys
time, which other jobs on shared cores inflate less than wall time. The table gives, per
side, the ratio of its CPU time to the reference's in the same round, for every round, and
their median and spread (min-max). Results go to benchmarks/generation/results/sampling.json; the
table in benchmarks/generation/README.md is printed by ``--table`` from that file.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

import torch
from transformers import GenerationConfig, LogitsProcessor, LogitsProcessorList

from fpa.data.prompts import render_prompt
from fpa.generation.samplers import NOISE_BLOCK_FLOATS, NOISE_BLOCK_STEPS
from fpa.generation.hf import HFBackend, row_seed
from fpa.generation.stops import completion_fields
from fpa.toy.model import build_toy_model
from fpa.toy.settings import TOY_PRESETS
from fpa.toy.task import DEFAULT_PROMPT_TEMPLATE, make_problems

OUT = Path(__file__).resolve().parent / "results" / "sampling.json"
REFERENCE = "model.generate (before)"
SAMPLING = dict(n=1, temperature=0.7, max_new_tokens=160, seed=42)


class SeededSampler(LogitsProcessor):
    """The sampler of the ``generate`` path, as it was (commit 9e581c8): each row's token from the
    row's own generator (block-drawn Exp(1) noise, argmax(p / q)), returned as one-hot scores
    (0 / -inf) so that greedy ``generate`` picks exactly that draw."""

    def __init__(self, generators: list[torch.Generator], temperature: float):
        self.generators = generators
        self.temperature = temperature
        self.step = 0
        self.noise: torch.Tensor | None = None  # [rows, block steps, vocabulary]

    def __call__(self, input_ids, scores):
        probs = torch.softmax(scores.float() / self.temperature, dim=-1).cpu()
        rows, vocabulary = probs.shape
        block = max(1, min(NOISE_BLOCK_STEPS, NOISE_BLOCK_FLOATS // (rows * vocabulary)))
        if self.step % block == 0:
            self.noise = torch.stack([torch.empty(block, vocabulary).exponential_(1, generator=g)
                                      for g in self.generators])
        choice = torch.argmax(probs / self.noise[:, self.step % block], dim=-1, keepdim=True)
        self.step += 1
        return torch.full_like(scores, float("-inf")).scatter_(1, choice.to(scores.device), 0.0)


class GenerateReference:
    """The HF backend before the slot decoder: ``model.generate`` on length-sorted, left-padded
    batches of ``batch_size`` rows (the backend's model and tokenizer, the same row seeds)."""

    def __init__(self, backend: HFBackend, batch_size: int):
        self.backend, self.batch_size = backend, batch_size

    def generate(self, prompts, *, n, temperature, max_new_tokens, seed):
        seen: Counter[str] = Counter()
        rows = []
        for prompt in prompts:
            rows.extend((prompt, row_seed(seed, prompt, seen[prompt], sample)) for sample in range(n))
            seen[prompt] += 1
        order = sorted(range(len(rows)), key=lambda r: len(rows[r][0]))
        texts = [""] * len(rows)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start:start + self.batch_size]
            for r, text in zip(chunk, self._batch([rows[r] for r in chunk], temperature, max_new_tokens)):
                texts[r] = text
        return [texts[i * n:(i + 1) * n] for i in range(len(prompts))]

    @torch.no_grad()
    def _batch(self, rows, temperature, max_new_tokens):
        tokenizer, model, eos = self.backend.tokenizer, self.backend.model, sorted(self.backend.eos_ids)
        tokenizer.padding_side = "left"
        batch = tokenizer([prompt for prompt, _ in rows], return_tensors="pt", padding=True, add_special_tokens=False)
        processors = LogitsProcessorList()
        if temperature > 0:  # 0: greedy generate
            processors.append(SeededSampler([torch.Generator().manual_seed(s) for _, s in rows], temperature))
        config = GenerationConfig(do_sample=False, max_new_tokens=max_new_tokens, eos_token_id=eos,
                                  pad_token_id=tokenizer.pad_token_id)
        model.generation_config = GenerationConfig(eos_token_id=eos, pad_token_id=tokenizer.pad_token_id)
        out = model.generate(**batch, generation_config=config, logits_processor=processors)
        texts = []
        for ids in out[:, batch["input_ids"].shape[1]:].tolist():
            cut = next((i for i, token in enumerate(ids) if token in eos), len(ids))
            texts.append(tokenizer.decode(ids[:cut], skip_special_tokens=True))
        return texts


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=None, help="HF model directory (default: build the CI toy model)")
    parser.add_argument("--problems", type=int, default=1500, help="toy prompts (toy8's size)")
    parser.add_argument("--operands", type=int, default=8)
    parser.add_argument("--batch", type=int, default=256, help="rows per batch / slots (config generation.batch_size)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default=str(OUT))
    return parser.parse_args(argv)


def toy_prompts(problems: int, operands: int) -> list[str]:
    return [render_prompt(DEFAULT_PROMPT_TEMPLATE, record["problem"])
            for record in make_problems(problems, seed=7, n_operands=operands)]


def timed(side, prompts) -> tuple[list, float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    completions = side.generate(prompts, **SAMPLING)
    elapsed = time.perf_counter() - wall, time.process_time() - cpu
    if isinstance(side, HFBackend):  # its completions carry their finish reasons; the reference's are texts
        completions = completion_fields(completions)["completions"]
    return completions, *elapsed


def markdown(results: dict) -> str:
    rounds = results["rounds"]
    lines = [f"{results['prompts']} prompts x 1 sample, batch {results['batch']}, 1 thread, {len(rounds)} rounds; "
             f"load average {results['load_average'][0]:.1f} -> {results['load_average'][1]:.1f}; completions "
             f"identical to the reference: {results['identical']}", "",
             "| side | CPU s (median) | CPU ratio per round | median | spread |", "|---|---:|---|---:|---:|"]
    for side in results["sides"]:
        cpu = [entry[side]["cpu_s"] for entry in rounds]
        ratios = [entry[side]["cpu_s"] / entry[REFERENCE]["cpu_s"] for entry in rounds]
        lines.append(f"| {side} | {statistics.median(cpu):.2f} | {' '.join(f'{r:.3f}' for r in ratios)} | "
                     f"{statistics.median(ratios):.3f} | {min(ratios):.3f}-{max(ratios):.3f} |")
    return "\n".join(lines)


def markdown_headline(results: dict) -> str:
    """The index's line: each side's CPU time over the reference's, paired per round."""
    rounds, sides = results["rounds"], [side for side in results["sides"] if side != REFERENCE]
    return "; ".join(f"{side} / model.generate CPU time: "
                     f"{statistics.median(entry[side]['cpu_s'] / entry[REFERENCE]['cpu_s'] for entry in rounds):.2f}"
                     for side in sides)


def main(argv=None) -> None:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        model = args.model
        if model is None:
            model = os.path.join(scratch, "toy")
            build_toy_model(model, TOY_PRESETS["ci"], threads=1)
        prompts = toy_prompts(args.problems, args.operands)
        sides = {REFERENCE: GenerateReference(HFBackend(model, batch_size=args.batch, threads=1), args.batch)}
        sides["slot decoder"] = HFBackend(model, batch_size=args.batch, threads=1)
        load = os.getloadavg()[0]
        rounds, outputs = [], {}
        for index in range(args.rounds):
            entry = {}
            for name in (list(sides) if index % 2 == 0 else list(sides)[::-1]):
                outputs[name], wall, cpu = timed(sides[name], prompts)
                entry[name] = {"wall_s": wall, "cpu_s": cpu}
                print(f"round {index + 1} {name}: {cpu:.2f} CPU s, {wall:.2f} s")
            rounds.append(entry)
    reference = outputs[REFERENCE]
    for name, completions in outputs.items():
        if completions != reference:
            differ = sum(a != b for a, b in zip(completions, reference))
            raise SystemExit(f"{name}: completions differ from the reference in {differ} of {len(prompts)} prompts")
    results = {"model": str(args.model or "toy ci preset"), "prompts": len(prompts), "batch": args.batch,
               "sides": list(sides), "identical": f"{len(prompts)} of {len(prompts)}", "rounds": rounds,
               "load_average": [load, os.getloadavg()[0]], "torch": torch.__version__}
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    print(markdown(results))


if __name__ == "__main__":
    main()
