"""The precision of the loss head (the body's is ``fpa.decoder.forward``).

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

from fpa.memory.training import head_products
from fpa.precision import HEAD_PRODUCTS

#: what ``training.head_precision`` accepts: a precision of the products (``fpa.precision.HEAD_PRODUCTS``:
#: tf32 is fp32 products with TF32 tensor cores, 10-bit mantissa inputs and fp32 sums, on CUDA; bf16 as
#: autocast's lm_head in verl, OpenRLHF, TRL), or ``auto`` (``resolve_head_precision``)
HEAD_PRECISION_CHOICES = ("auto", *HEAD_PRODUCTS)


def resolve_head_precision(head_precision: str, device: torch.device) -> str:
    """``fpa.memory.training.head_products`` on ``device``'s type, ``head_precision`` checked first."""
    if head_precision not in HEAD_PRECISION_CHOICES:
        raise ValueError(f"training.head_precision: expected one of {list(HEAD_PRECISION_CHOICES)}, "
                         f"got {head_precision!r}")
    return head_products(head_precision, torch.device(device).type)


@contextlib.contextmanager
def head_matmuls(head_precision: str):
    """TF32 on CUDA's fp32 matmuls inside the block for ``tf32``, off for the others; restored after."""
    if head_precision not in HEAD_PRODUCTS:
        raise ValueError(f"training.head_precision: expected one of {list(HEAD_PRODUCTS)}, got {head_precision!r}")
    matmul = torch.backends.cuda.matmul
    before = matmul.fp32_precision
    matmul.fp32_precision = "tf32" if head_precision == "tf32" else "ieee"
    try:
        yield
    finally:
        matmul.fp32_precision = before
