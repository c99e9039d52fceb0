"""The slot decoder's token samplers: softmax(logits / T) per row, each row drawing with its own
noise, so what a row gets does not depend on its slot, its neighbours or when it was admitted.

Both draw by Gumbel-max, argmax(p / q) with q ~ Exp(1) over the vocabulary (what ATen's
``torch.multinomial`` computes for one sample, ``Distributions.cpp``, and vLLM's sampler). They
differ in where q comes from:

  * ``generator``: each row's own CPU ``torch.Generator``, seeded with the row's seed, so a row
    gets exactly ``torch.multinomial(p, 1, generator=row's)``'s draws (HF ``generate`` samples
    with ``torch.multinomial`` too, on the process-wide generator). The probabilities of every
    row over the vocabulary come to the CPU each step: the CPU path, whose tokens the toy's
    records hold.
  * ``counter``: ``fpa.generation.noise``, a hash of (row seed, token index, vocabulary id)
    computed where the logits are; only the token ids leave the device. Its draws are not the
    generator's, so the two give different (equally distributed) samples for the same seed.

Where the counter sampler differs from its peers: HF ``generate`` draws every row from one
process-wide generator, so a row's sample depends on the batch it is in; vLLM's GPU sampler keys
the noise as here but by the token's position in the sequence and with Philox in a fused Triton
kernel. Ours is plain torch integer arithmetic, so that it runs (and is tested) on the CPU and on
any GPU without a kernel of its own, keyed by the token's index in the completion (the row seed
already covers the prompt); unfused, it writes int64 temporaries of [rows, vocabulary], chunked.

``auto``: generator on the CPU, counter on any other device. ``temperature == 0``: the argmax of
the logits (greedy), either way. A sampler's rows sit in slots ``first:last`` of a step;
``move`` follows the decoder moving a live row into a freed slot.
"""

from __future__ import annotations

from typing import Sequence

import torch

from fpa.generation.noise import exponential, step_keys, vocabulary_offsets

#: the generator sampler draws Exp(1) noise ahead for blocks of at most this many steps and floats
#: (slots x steps x vocabulary): few generator calls per row, little noise for steps after a row stopped.
NOISE_BLOCK_STEPS = 32
NOISE_BLOCK_FLOATS = 1 << 24
#: the counter sampler hashes at most this many (row, vocabulary id) pairs at a time: its int64
#: temporaries stay ~128 MiB each at any row count.
COUNTER_CHUNK_FLOATS = 1 << 24


def to_device(tensor: torch.Tensor, device: torch.device) -> torch.Tensor:
    """A CPU tensor copied to ``device`` without waiting for the work queued there (pinned first on a
    GPU: a copy from pageable memory may wait)."""
    if device.type == "cuda":
        tensor = tensor.pin_memory()
    return tensor.to(device, non_blocking=True)


def device_index(values: Sequence[int], device: torch.device) -> torch.Tensor:
    return to_device(torch.tensor(values, dtype=torch.long), device)


class GeneratorSampler:
    """The ``generator`` sampler. A generator's Exp(1) stream does not depend on how it is split into
    calls, so each row draws the noise of a block of steps in one call, and a step is one batched
    division and argmax."""

    def __init__(self, slots: int, vocabulary: int, temperature: float):
        self.temperature = temperature
        self.block = max(1, min(NOISE_BLOCK_STEPS, NOISE_BLOCK_FLOATS // (slots * vocabulary)))
        self.noise = torch.empty(slots, self.block, vocabulary) if temperature > 0 else None
        self.used = [self.block] * slots  # steps of its block a slot's row has consumed
        self.generators: list[torch.Generator | None] = [None] * slots

    def admit(self, first: int, seeds: Sequence[int | None]) -> None:
        for slot, seed in enumerate(seeds, first):
            self.generators[slot] = None if seed is None else torch.Generator().manual_seed(seed)
            self.used[slot] = self.block

    def move(self, source: list[int], target: list[int]) -> None:
        """Slot ``source[i]``'s row to ``target[i]`` (disjoint lists: live rows move below the live count)."""
        for s, t in zip(source, target):
            self.generators[t], self.used[t] = self.generators[s], self.used[s]
        if self.noise is not None:
            self.noise[target] = self.noise[source]

    def draw(self, logits: torch.Tensor, first: int, last: int) -> torch.Tensor:
        """One token per row of ``logits`` [rows, vocabulary], the rows of slots ``first:last``."""
        if self.noise is None:
            return torch.argmax(logits, dim=-1).cpu()
        slot_list = list(range(first, last))
        for slot in slot_list:
            if self.used[slot] == self.block:
                self.noise[slot].exponential_(1, generator=self.generators[slot])
                self.used[slot] = 0
        steps = torch.tensor([self.used[slot] for slot in slot_list])
        for slot in slot_list:
            self.used[slot] += 1
        probs = torch.softmax(logits.float() / self.temperature, dim=-1).cpu()
        return torch.argmax(probs / self.noise[torch.arange(first, last), steps], dim=-1)


class CounterSampler:
    """The ``counter`` sampler: each slot's row seed and token count live on the device, and a step is
    argmax(logits / T - log q) there (the log of Gumbel-max's p / q, without the softmax)."""

    def __init__(self, slots: int, vocabulary: int, temperature: float, device: torch.device):
        self.temperature, self.device = temperature, device
        self.seeds = torch.zeros(slots, dtype=torch.long, device=device)
        self.steps = torch.zeros(slots, dtype=torch.long, device=device)  # tokens the slot's row has drawn
        self.offsets = vocabulary_offsets(vocabulary, device)
        self.chunk = max(1, COUNTER_CHUNK_FLOATS // vocabulary)

    def admit(self, first: int, seeds: Sequence[int | None]) -> None:
        self.seeds[first:first + len(seeds)] = device_index([seed or 0 for seed in seeds], self.device)
        self.steps[first:first + len(seeds)] = 0

    def move(self, source: list[int], target: list[int]) -> None:
        source_index, target_index = device_index(source, self.device), device_index(target, self.device)
        self.seeds[target_index], self.steps[target_index] = self.seeds[source_index], self.steps[source_index]

    def draw(self, logits: torch.Tensor, first: int, last: int) -> torch.Tensor:
        if self.temperature == 0:
            return torch.argmax(logits, dim=-1)
        keys = step_keys(self.seeds[first:last], self.steps[first:last])
        self.steps[first:last] += 1
        scores = logits.float() / self.temperature
        for start in range(0, len(keys), self.chunk):
            rows = slice(start, start + self.chunk)
            scores[rows] -= torch.log(exponential(keys[rows], self.offsets))
        return torch.argmax(scores, dim=-1)


NOISES = ("auto", "generator", "counter")


def check_noise(noise: str) -> None:
    if noise not in NOISES:
        raise ValueError(f"noise: expected one of {list(NOISES)}, got {noise!r}")


def make_sampler(noise: str, slots: int, vocabulary: int, temperature: float, device: torch.device):
    """The sampler of ``noise`` (one of ``NOISES``) for rows decoding on ``device``."""
    check_noise(noise)
    if noise == "generator" or (noise == "auto" and device.type == "cpu"):
        return GeneratorSampler(slots, vocabulary, temperature)
    return CounterSampler(slots, vocabulary, temperature, device)
