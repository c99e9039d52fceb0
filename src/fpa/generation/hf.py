"""Sampling with Hugging Face ``model.generate``: the CPU backend of the toy pipeline.

Every (prompt, sample) pair is one row of a left-padded batch. Sampling itself
happens in ``SeededSampler``, a logits processor that draws each row's token
from that row's own ``torch.Generator`` and masks every other token, so the
greedy step of ``generate`` then picks exactly that draw. A row's generator is
seeded from (seed, prompt text, occurrence of that prompt in the call, sample
index), which gives:

  * the same call returns the same completions;
  * batch size, prompt order and sharding of the prompt list (with ``offsets``
    for prompts repeated across shards) do not change what a prompt gets, up to last-bit differences of batched matmuls (a draw
    that lands within ~1e-6 of a probability boundary can flip);
  * ``temperature == 0`` is plain greedy decoding, repeated ``n`` times.

A sample stops at any eos id of the model's ``generation_config`` and at the
tokenizer's eos. Only these ids are taken from the ``generation_config``; its sampling
settings (top_p, top_k, repetition_penalty, ...) are ignored, so the samples
follow softmax(logits / T) exactly, as with vLLM's ``SamplingParams(temperature=T)``.
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from typing import Mapping, Sequence

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig, LogitsProcessor, LogitsProcessorList

from fpa.generation.backend import check_sampling_args


def row_seed(seed: int, prompt: str, occurrence: int, sample: int) -> int:
    key = f"{seed}\0{occurrence}\0{sample}\0{prompt}".encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big") >> 1  # a non-negative int64


#: Exp(1) noise is drawn ahead for blocks of at most this many steps and floats (rows x steps x
#: vocabulary): few generator calls per row, and little noise drawn for steps after every row stopped.
NOISE_BLOCK_STEPS = 32
NOISE_BLOCK_FLOATS = 1 << 24


class SeededSampler(LogitsProcessor):
    """Temperature sampling with one generator per batch row; returns one-hot (0 / -inf) scores.

    A row's token is exactly ``torch.multinomial(p, 1, generator=row's)``'s draw. For one sample,
    ATen computes that as argmax(p / q), q ~ Exp(1) drawn from the generator over the vocabulary
    (Gumbel-max; ``Distributions.cpp``), and a generator's Exp(1) stream does not depend on how it
    is split into calls. So each row draws the noise of many steps in one call, and a step is one
    batched division and argmax: the cost of sampling no longer grows with rows x steps of Python
    calls, and the draws are bit-identical to per-step ``multinomial``.
    """

    def __init__(self, generators: list[torch.Generator], temperature: float):
        self.generators = generators
        self.temperature = temperature
        self.step = 0
        self.noise: torch.Tensor | None = None  # [rows, block steps, vocabulary]

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        probs = torch.softmax(scores.float() / self.temperature, dim=-1).cpu()
        rows, vocabulary = probs.shape
        if len(self.generators) != rows:
            raise ValueError(f"SeededSampler has {len(self.generators)} generators for {rows} rows")
        block = max(1, min(NOISE_BLOCK_STEPS, NOISE_BLOCK_FLOATS // (rows * vocabulary)))
        if self.step % block == 0:
            self.noise = torch.stack([torch.empty(block, vocabulary).exponential_(1, generator=g)
                                      for g in self.generators])
        choice = torch.argmax(probs / self.noise[:, self.step % block], dim=-1, keepdim=True)
        self.step += 1
        out = torch.full_like(scores, float("-inf"))
        return out.scatter_(1, choice.to(scores.device), 0.0)


class HFBackend:
    """``GenerationBackend`` on ``transformers``; options: batch_size (rows per ``generate``),
    threads (``torch.set_num_threads``, process-wide), device, dtype."""

    def __init__(
        self,
        model_dir: str | os.PathLike,
        *,
        batch_size: int = 64,
        threads: int | None = None,
        device: str = "cpu",
        dtype: str = "float32",
    ):
        if batch_size < 1:
            raise ValueError(f"batch_size: expected >= 1, got {batch_size}")
        if threads is not None:
            torch.set_num_threads(threads)
        self.batch_size = batch_size
        self.device = torch.device(device)
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=getattr(torch, dtype)).to(self.device)
        self.model.eval()
        eos = self.model.generation_config.eos_token_id
        eos = [*(eos if isinstance(eos, list) else [eos]), self.tokenizer.eos_token_id]
        self.eos_ids = {token for token in eos if token is not None}  # a sample stops at any of them
        # Sample from softmax(logits / T) only: drop the model's own top_p, top_k,
        # repetition_penalty, ... which generate() would otherwise merge in.
        self.model.generation_config = GenerationConfig(
            eos_token_id=sorted(self.eos_ids), pad_token_id=self.tokenizer.pad_token_id
        )

    def generate(
        self, prompts: Sequence[str], *, n: int, temperature: float, max_new_tokens: int, seed: int,
        offsets: Mapping[str, int] | None = None,
    ) -> list[list[str]]:
        check_sampling_args(n, temperature, max_new_tokens)
        if temperature == 0:  # greedy: one decode per prompt, copied
            greedy = self._run([(p, None) for p in prompts], 0.0, max_new_tokens)
            return [[text] * n for text in greedy]
        seen: Counter[str] = Counter(offsets or {})
        rows = []
        for prompt in prompts:
            for sample in range(n):
                rows.append((prompt, row_seed(seed, prompt, seen[prompt], sample)))
            seen[prompt] += 1
        flat = self._run(rows, temperature, max_new_tokens)
        return [flat[i * n : (i + 1) * n] for i in range(len(prompts))]

    def _run(self, rows: list[tuple[str, int | None]], temperature: float, max_new_tokens: int) -> list[str]:
        """Completions for (prompt, row seed) rows, batched by prompt length; returned in row order."""
        order = sorted(range(len(rows)), key=lambda r: len(rows[r][0]))
        texts: list[str] = [""] * len(rows)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            for r, text in zip(chunk, self._generate_batch([rows[r] for r in chunk], temperature, max_new_tokens)):
                texts[r] = text
        return texts

    @torch.no_grad()
    def _generate_batch(self, rows, temperature: float, max_new_tokens: int) -> list[str]:
        batch = self.tokenizer(
            [prompt for prompt, _ in rows], return_tensors="pt", padding=True, add_special_tokens=False
        ).to(self.device)
        processors = LogitsProcessorList()
        if temperature > 0:
            generators = [torch.Generator().manual_seed(s) for _, s in rows]
            processors.append(SeededSampler(generators, temperature))
        config = GenerationConfig(
            do_sample=False,  # the draw happens in SeededSampler; argmax then picks it
            max_new_tokens=max_new_tokens,
            eos_token_id=sorted(self.eos_ids),
            pad_token_id=self.tokenizer.pad_token_id,
        )
        out = self.model.generate(**batch, generation_config=config, logits_processor=processors)
        new_tokens = out[:, batch["input_ids"].shape[1] :].tolist()
        return [self.tokenizer.decode(self._until_eos(ids), skip_special_tokens=True) for ids in new_tokens]

    def _until_eos(self, ids: list[int]) -> list[int]:
        for i, token in enumerate(ids):
            if token in self.eos_ids:
                return ids[:i]
        return ids
