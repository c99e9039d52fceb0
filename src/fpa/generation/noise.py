"""Counter-based Gumbel noise: the same numbers for a (row seed, token index, vocabulary id) on any
device, in any batch, without a generator's state.

A row's noise at its ``step``-th generated token is element ``v + 1`` (v: the vocabulary id) of
the splitmix64 stream seeded with element ``step + 1`` of the stream seeded with the row's seed
(Steele, Lea & Flood 2014, "Fast splittable pseudorandom number generators"; the stream's i-th
element is ``mix64(seed + i * GAMMA)``). It is computed in int64 tensor arithmetic, which wraps
modulo 2**64 on every torch backend, so any device computes it without a kernel of its own.
vLLM's GPU sampler keys its Gumbel noise the same way (Philox from the request's seed and the
token's position, indexed by vocabulary id; ``vllm/v1/worker/gpu/sample/gumbel.py``).

Of the 64 bits, the top 32 make a uniform u = (k + 0.5) / 2**32 strictly inside (0, 1), and the
Exp(1) draw is ``-log1p(-u)``, which resolves the small draws that win an argmax (u near 0,
resolution 2**-32) as vLLM does. In float32, k >= 2**32 - 128 rounds to 2**32 and u to 1 (an
infinite draw: that vocabulary id could not be drawn, in ~0.45 % of a row's steps at V = 151,936);
u is therefore capped at the largest float32 below 1, 1 - 2**-24, whose draw is 24 ln 2 = 16.6.
Those 128 counters are the only ones whose draw the cap changes, so a token differs from one drawn
before the cap only at a row-step where such a counter's id now wins the argmax (before, it could
not be drawn); the CPU's generator noise (``fpa.generation.samplers``) does not pass here.
"""

from __future__ import annotations

import torch

_U64 = 1 << 64
BELOW_ONE = 1.0 - 2.0 ** -24  # the largest float32 below 1


def _int64(constant: int) -> int:
    """A 64-bit constant as the int64 with the same bits."""
    return constant - _U64 if constant >= 1 << 63 else constant


GAMMA = _int64(0x9E3779B97F4A7C15)  # splitmix64's increment (the golden ratio)
_MIX1 = _int64(0xBF58476D1CE4E5B9)
_MIX2 = _int64(0x94D049BB133111EB)


def _shift_right(x: torch.Tensor, bits: int) -> torch.Tensor:
    """Logical right shift of int64 bits (torch's ``>>`` on int64 keeps the sign)."""
    return (x >> bits) & ((1 << (64 - bits)) - 1)


def mix64(x: torch.Tensor) -> torch.Tensor:
    """splitmix64's finaliser (a bijection of 64-bit words), on int64 tensors."""
    x = (x ^ _shift_right(x, 30)) * _MIX1
    x = (x ^ _shift_right(x, 27)) * _MIX2
    return x ^ _shift_right(x, 31)


def step_keys(seeds: torch.Tensor, steps: torch.Tensor) -> torch.Tensor:
    """[rows] int64: the key of each row's ``steps``-th token, from its seed."""
    return mix64(seeds + (steps + 1) * GAMMA)


def vocabulary_offsets(vocabulary: int, device: torch.device) -> torch.Tensor:
    """[vocabulary] int64: ``(v + 1) * GAMMA``, the stream positions of the vocabulary ids."""
    return (torch.arange(vocabulary, dtype=torch.long, device=device) + 1) * GAMMA


def exponential(keys: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
    """[rows, vocabulary] float32 Exp(1) draws of the rows' ``keys`` [rows] at ``offsets`` [vocabulary]."""
    bits = mix64(keys[:, None] + offsets)
    uniform = (_shift_right(bits, 32).float() + 0.5) * 2.0 ** -32  # +0.5 keeps it off 0
    return -torch.log1p(-uniform.clamp_(max=BELOW_ONE))  # the top 128 k round to 1 in float32
