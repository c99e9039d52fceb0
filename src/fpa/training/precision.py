"""The precision of a model's forward, one policy for the policy, the online reference and the cache.

``training.precision``: ``bf16`` runs the decoder under bf16 autocast over fp32 weights, ``fp32``
runs it in fp32. The reference's hidden states (cached by ``cache_reference`` or computed online)
go through the very same path as the policy's (``decoder_hidden``), as the peers compute their
reference: TRL's ``precompute_ref_log_probs`` and its reference model run in the policy's dtype
and autocast, verl's reference worker and OpenRLHF's reference model in the actor's bf16. So at
step 0, θ = ref, the policy's hidden states equal the reference's (up to the kernels' order of
summation over differently padded batches), and FPA's λ·(h_θ − h_ref) starts at zero instead of
at λ times the gap between a bf16 and an fp32 forward.

``training.head_precision``: the loss head's [N, d]×[d, V] products (``fpa.training.head``);
its softmax and sums are fp32 in every case. ``auto`` (the default) takes bf16 products on CUDA
and exact fp32 ones elsewhere (what CPU runs, the toy's records among them, always computed):
bf16's root-mean-square error against float64 in FPA's and Off-RL's weights and in log π_θ stays
within twice the error that storing z in bf16 (the reference cache's dtype under bf16 products) already puts there (measured on the CPU: docs/archive/benchmarks.md,
``head_precision.py``), at the bf16 tensor cores' rate, twice TF32's
on Ampere and Hopper.
"""

from __future__ import annotations

import contextlib

import torch
from torch import Tensor

from fpa.memory.training import head_products

AUTOCAST = {"bf16": torch.bfloat16, "fp32": None}
#: fp32: exact products; tf32: fp32 products with TF32 tensor cores (10-bit mantissa inputs, fp32
#: sums) on CUDA, exact elsewhere; bf16: bf16 products as autocast's lm_head (verl, OpenRLHF, TRL)
HEAD_PRECISIONS = ("fp32", "tf32", "bf16")
#: what ``training.head_precision`` accepts: a precision, or ``auto`` (``resolve_head_precision``)
HEAD_PRECISION_CHOICES = ("auto", *HEAD_PRECISIONS)


def resolve_head_precision(head_precision: str, device: torch.device) -> str:
    """``fpa.memory.training.head_products`` on ``device``'s type, ``head_precision`` checked first."""
    if head_precision not in HEAD_PRECISION_CHOICES:
        raise ValueError(f"training.head_precision: expected one of {list(HEAD_PRECISION_CHOICES)}, "
                         f"got {head_precision!r}")
    return head_products(head_precision, torch.device(device).type)


def autocast_dtype(precision: str) -> torch.dtype | None:
    if precision not in AUTOCAST:
        raise ValueError(f"training.precision: expected one of {sorted(AUTOCAST)}, got {precision!r}")
    return AUTOCAST[precision]


def decoder_hidden(lm, input_ids: Tensor, attention_mask: Tensor | None, autocast: torch.dtype | None,
                   position_ids: Tensor | None = None, sequence_lengths: tuple[int, ...] | None = None) -> Tensor:
    """The decoder's final (post-norm) hidden states [B, L, d] in fp32, under ``autocast`` if given; a packed
    row passes its ``position_ids`` and ``sequence_lengths`` (``fpa.training.packing``)."""
    packed = {} if sequence_lengths is None else {"position_ids": position_ids, "sequence_lengths": sequence_lengths}
    with torch.autocast(input_ids.device.type, dtype=autocast, enabled=autocast is not None):
        hidden = lm.get_decoder()(input_ids=input_ids, attention_mask=attention_mask, **packed).last_hidden_state
    return hidden.float()


@contextlib.contextmanager
def head_matmuls(head_precision: str):
    """TF32 on CUDA's fp32 matmuls inside the block for ``tf32``, off for the others; restored after."""
    if head_precision not in HEAD_PRECISIONS:
        raise ValueError(f"training.head_precision: expected one of {list(HEAD_PRECISIONS)}, got {head_precision!r}")
    matmul = torch.backends.cuda.matmul
    before = matmul.fp32_precision
    matmul.fp32_precision = "tf32" if head_precision == "tf32" else "ieee"
    try:
        yield
    finally:
        matmul.fp32_precision = before
