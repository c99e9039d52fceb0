"""FPA's head costs Off-RL's plus exactly one no-grad [N, d]×[d, V] reference product (issue 39).

Counted with torch's ``FlopCounterMode`` over a forward and backward of the head, in every head
precision and for a reference cached in fp32 and in bf16, the trainer's two calls: Off-RL (no
reference: its log π_ref(y|x) comes summed from the cache) and FPA (the cached z_ref and its
logsumexp, λ).
"""

from __future__ import annotations

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from fpa.training.head import token_statistics
from fpa.precision import HEAD_PRODUCTS as HEAD_PRECISIONS

N, D, V, CHUNK = 24, 16, 64, 8


def _head_flops(head_precision: str, cache_dtype: torch.dtype | None) -> int:
    gen = torch.Generator().manual_seed(0)
    hidden = torch.randn(N, D, generator=gen).requires_grad_()
    weight = (torch.randn(V, D, generator=gen) / 4).requires_grad_()
    targets = torch.randint(0, V, (N,), generator=gen)
    fpa = {}
    if cache_dtype is not None:
        ref_hidden = (hidden.detach() + 0.1 * torch.randn(N, D, generator=gen)).to(cache_dtype)
        ref_weight = weight.detach().clone()
        fpa = {"ref_hidden": ref_hidden, "ref_weight": ref_weight, "lam": 2.0,
               "ref_logsumexp": (ref_hidden.float() @ ref_weight.T).logsumexp(-1)}
    with FlopCounterMode(display=False) as counter:
        stats = token_statistics(hidden, weight, targets, chunk_size=CHUNK, head_precision=head_precision, **fpa)
        stats.logp.sum().backward()
    return counter.get_total_flops()


@pytest.mark.parametrize("cache_dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("head_precision", HEAD_PRECISIONS)
def test_fpa_pays_one_reference_product_beyond_off_rl(head_precision, cache_dtype):
    extra = _head_flops(head_precision, cache_dtype) - _head_flops(head_precision, None)
    one_product = 2 * N * D * V
    assert extra == one_product, f"FPA − Off-RL = {extra / one_product:.2f} [N, d]×[d, V] products, expected 1"
