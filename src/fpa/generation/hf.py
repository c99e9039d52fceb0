"""Sampling on ``transformers`` models: the CPU backend of the toy pipeline, and the GPU backend
where vLLM is not installed.

Every (prompt, sample) pair is one row; ``fpa.generation.decode.SlotDecoder`` decodes
the rows, ``batch_size`` at a time over a preallocated KV cache, each row drawing its
tokens with its own noise (``fpa.generation.samplers``: on the CPU its own ``torch.Generator``,
on a GPU a counter-based hash computed there). A row's seed comes from (seed, prompt
text, occurrence of that prompt in the call, sample index), which gives:

  * the same call returns the same completions;
  * batch size, prompt order and sharding of the prompt list (with ``offsets``
    for prompts repeated across shards) do not change what a prompt gets, up to last-bit
    differences of batched kernels (a draw that lands within ~1e-6 of a probability boundary
    can flip; none did in the tests and benchmarks, against ``model.generate`` either);
  * ``temperature == 0`` is plain greedy decoding, repeated ``n`` times.

A sample stops at any eos id of the model's ``generation_config``, at the tokenizer's
eos and at the stop words that are one added token (``fpa.generation.stops``); the stop
words of the text are cut after decoding, where the harness cuts them (the text is the same
as if decoding had stopped there; the row only decodes on to its eos or length limit).
Only these ids are taken from the ``generation_config``; its sampling
settings (top_p, top_k, repetition_penalty, ...) are ignored, so the samples
follow softmax(logits / T) exactly, as with vLLM's ``SamplingParams(temperature=T)``.
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from typing import Mapping, Sequence

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from fpa.generation.backend import check_sampling_args
from fpa.generation.decode import SlotDecoder
from fpa.generation.samplers import check_noise
from fpa.generation.stops import Completion, finish, stop_token_ids
from fpa.generation.weights import load_checkpoint_weights
from fpa.precision import torch_name
from fpa.samples.pad_token import pad_token_id


def row_seed(seed: int, prompt: str, occurrence: int, sample: int) -> int:
    key = f"{seed}\0{occurrence}\0{sample}\0{prompt}".encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big") >> 1  # a non-negative int64


class HFBackend:
    """``GenerationBackend`` on ``transformers``; options: batch_size (rows decoding at a time), threads
    (``torch.set_num_threads``, process-wide), device (auto: the GPU the job was given, else the
    CPU), dtype, noise (the sampler's, ``fpa.generation.samplers.NOISES``; auto: the generator's
    on the CPU, the counter's on a GPU)."""

    def __init__(
        self,
        model_dir: str | os.PathLike,
        *,
        batch_size: int = 64,
        threads: int | None = None,
        device: str = "auto",
        dtype: str = torch_name("fp32"),
        noise: str = "auto",
    ):
        if batch_size < 1:
            raise ValueError(f"batch_size: expected >= 1, got {batch_size}")
        check_noise(noise)  # before the model loads
        if threads is not None:
            torch.set_num_threads(threads)
        self.batch_size, self.noise = batch_size, noise
        self.device = torch.device(("cuda" if torch.cuda.is_available() else "cpu") if device == "auto" else device)
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
        self.model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=getattr(torch, dtype)).to(self.device)
        self.model.eval()
        eos = self.model.generation_config.eos_token_id
        eos = [*(eos if isinstance(eos, list) else [eos]), self.tokenizer.eos_token_id]
        self.eos_ids = {token for token in eos if token is not None}  # a sample stops at any of them

    def load_weights(self, model_dir: str | os.PathLike) -> None:
        """Another checkpoint of the same model (a curve's next snapshot) into this model object."""
        load_checkpoint_weights(self.model, model_dir)

    def generate(
        self, prompts: Sequence[str], *, n: int, temperature: float, max_new_tokens: int, seed: int,
        stop: Sequence[str] = (), offsets: Mapping[str, int] | None = None,
    ) -> list[list[Completion]]:
        check_sampling_args(n, temperature, max_new_tokens)
        if temperature == 0:  # greedy: one decode per prompt, copied
            greedy = self._run([(p, None) for p in prompts], 0.0, max_new_tokens, stop)
            return [[text] * n for text in greedy]
        seen: Counter[str] = Counter(offsets or {})
        rows = []
        for prompt in prompts:
            for sample in range(n):
                rows.append((prompt, row_seed(seed, prompt, seen[prompt], sample)))
            seen[prompt] += 1
        flat = self._run(rows, temperature, max_new_tokens, stop)
        return [flat[i * n : (i + 1) * n] for i in range(len(prompts))]

    def _run(self, rows: list[tuple[str, int | None]], temperature: float, max_new_tokens: int,
             stop: Sequence[str]) -> list[Completion]:
        """Completions for (prompt, row seed) rows, in row order."""
        prompt_ids = [self.tokenizer(prompt, add_special_tokens=False)["input_ids"] for prompt, _ in rows]
        stop_ids = self.eos_ids | stop_token_ids(self.tokenizer, stop)
        decoder = SlotDecoder(self.model, slots=self.batch_size, stop_ids=stop_ids,
                              pad_id=pad_token_id(self.tokenizer), noise=self.noise)
        generated = decoder.run(prompt_ids, [seed for _, seed in rows], temperature=temperature,
                                max_new_tokens=max_new_tokens)
        return [finish(self.tokenizer, ids, stop_ids, stop) for ids in generated]
