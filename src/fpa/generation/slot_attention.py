"""The slot decoder's attention: SDPA that keeps grouped K/V grouped.

A decode step attends with a per-row mask (rows end at different positions), and with a mask
transformers' SDPA path repeats each K/V head for its query heads (``repeat_kv``) before a CUDA
kernel runs: the cache is copied and read once per query head (4 times for Qwen3-4B's 32 query
heads on 8 K/V heads, config/paper.yaml). Here a decode step's one query token per head becomes,
per K/V head, a block of ``groups`` query rows against that head's keys: one SDPA call, the row's
mask broadcast over the block, no copy. Transformers 5.23 does the same (``pack_gqa``); 5.19 (the
GPU env's) and 5.17 (a bare GPU machine's) repeat K/V (their ``sdpa_attention.py``). A prefill
attends among its own rows only (``SlotCache``: keys of positions 0.. of each prompt, right
padded), which is exactly causal attention: no mask, ``is_causal``, and SDPA's ``enable_gqa``,
so the flash kernel takes it (in half precision).

A decode step's rows come in spans (``slot_spans``, from ``fpa.generation.slot_cache.SlotRows.spans``):
neighbouring slots admitted close together, each span attending over its own longest row's keys,
not the batch's: rows admitted later do not read the older rows' length of masked keys.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Sequence

import torch
from transformers import AttentionInterface
from transformers.integrations.sdpa_attention import sdpa_attention_forward

NAME = "fpa_slots"


def slot_attention(module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                   attention_mask: torch.Tensor | None, dropout: float = 0.0, scaling: float | None = None,
                   slot_spans: Sequence[tuple[int, int, int]] | None = None, **kwargs) -> tuple[torch.Tensor, None]:
    """``query`` [rows, heads, q, dim], ``key``/``value`` [rows, kv heads, k, dim]; returns [rows, q, heads, dim].
    ``slot_spans`` (a decode step's): (first, stop, keys) of each span of rows, which attends over its
    first ``keys`` keys only; default one span of every row and key."""
    kwargs.pop("is_causal", None)
    if query.shape[2] > 1:  # a prefill: causal among its own positions (k == q)
        return sdpa_attention_forward(module, query, key, value, None, dropout, scaling, is_causal=True, **kwargs)
    rows, heads, _, dim = query.shape
    kv_heads = key.shape[1]
    grouped = query.reshape(rows, kv_heads, heads // kv_heads, dim)  # query head h reads K/V head h // groups
    outs = [torch.nn.functional.scaled_dot_product_attention(
        grouped[first:stop], key[first:stop, :, :keys], value[first:stop, :, :keys],
        attn_mask=attention_mask[first:stop, ..., :keys], dropout_p=dropout, scale=scaling)
        for first, stop, keys in slot_spans or [(0, rows, key.shape[2])]]
    out = outs[0] if len(outs) == 1 else torch.cat(outs)
    return out.reshape(rows, heads, 1, dim).transpose(1, 2), None


AttentionInterface.register(NAME, slot_attention)


@contextmanager
def grouped_slot_attention(model):
    """``model`` attends with ``slot_attention`` inside the block when it attends with SDPA (an eager or
    flash model keeps its own, which the decoder's prepared masks already suit or not); yields whether
    it does (and so takes ``slot_spans``)."""
    config = model.config
    if config._attn_implementation != "sdpa":
        yield False
        return
    config._attn_implementation = NAME
    try:
        yield True
    finally:
        config._attn_implementation = "sdpa"
