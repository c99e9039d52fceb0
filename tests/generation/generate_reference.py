"""The HF backend's sampling before the slot decoder (up to commit 9e581c8), kept as the reference the
slot decoder's completions must equal (``test_decode.py``): ``model.generate`` on length-sorted,
left-padded batches with ``SeededSampler`` drawing each row's token from the row's own generator. Its
speed against the slot decoder was measured once: docs/archive/benchmarks.md."""

from __future__ import annotations

from collections import Counter

import torch
from transformers import GenerationConfig, LogitsProcessor, LogitsProcessorList

from fpa.generation.hf import HFBackend, row_seed
from fpa.generation.samplers import NOISE_BLOCK_FLOATS, NOISE_BLOCK_STEPS
from fpa.samples.prompts import render_prompt
from fpa.toy.task import DEFAULT_PROMPT_TEMPLATE, make_problems


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


def toy_prompts(problems: int, operands: int) -> list[str]:
    return [render_prompt(DEFAULT_PROMPT_TEMPLATE, record["problem"])
            for record in make_problems(problems, seed=7, n_operands=operands)]
