"""Padding-free batches (``training.attention: packed``): a micro-batch's sequences laid end to end in one
row, positions restarting at every sequence, each sequence attending only to itself.

A padded micro-batch of one problem's K samples is as wide as its longest sample: on MATH's length mix
about half its tokens are padding, and the body's linear layers, its attention and the reference cache's
forward compute them all. Packed, the body computes the real tokens only: the row's positions restart
at every sequence (Transformers' packed-sequence format, ``position_ids``), and the attention runs torch's
SDPA once per sequence, causal, without a mask (``packed_attention``, registered with Transformers'
``AttentionInterface`` so that every Qwen2/Qwen3/Llama layer calls it). Each query attends to the keys of
its own sequence before it, as in the padded row, so the hidden states are the padded layout's up to the
kernels' order of summation (``tests/training/test_packing.py``).

Why this kernel, and not the two Transformers or torch offer for packed rows:

- Transformers' packed path under ``sdpa`` (``masking_utils.find_packed_sequence_indices`` turning the
  restarting positions into a [1, 1, T, T] mask) is right, but SDPA then computes every query against every
  key of the whole row, (Σ s_i)² products instead of Σ s_i², on the math or memory-efficient kernel
  (flash takes no mask) over repeated K/V: more attention FLOPs than the padding it saves.
- FlexAttention's document mask (``flex_attention`` with the same packed positions) skips the masked
  blocks on CUDA, but has no backward on CPU (torch 2.13: "FlexAttention does not support backward on
  CPU"), so its gradients could not be held against the padded path's in the CPU tests, and it compiles
  a kernel per new shape.

SDPA per sequence takes on CUDA the flash kernel with grouped K/V (no mask, ``is_causal``), as the
``causal`` padded path does, and the CPU's flash kernel with its backward here; a layer's attention holds
no weights, so FSDP2 and DDP wrap it as before. The sequence lengths come as Python integers with the
batch (``sequence_lengths``), so splitting the row needs no device synchronisation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor
from transformers import AttentionInterface
from transformers.masking_utils import AttentionMaskInterface

#: the attention implementation's name in Transformers' registries
PACKED_ATTENTION = "fpa_packed_sdpa"


def packed_attention(module, query: Tensor, key: Tensor, value: Tensor, attention_mask: Tensor | None,
                     dropout: float = 0.0, scaling: float | None = None, sequence_lengths: Sequence[int] | None = None,
                     sliding_window: int | None = None, **kwargs) -> tuple[Tensor, None]:
    """Causal attention within each sequence of a packed row. query [1, H, T, hd], key and value
    [1, H_kv, T, hd], ``sequence_lengths`` summing to T; returns ([1, T, H, hd], None) as Transformers'
    attention functions do."""
    if sequence_lengths is None or attention_mask is not None:
        raise ValueError(f"{PACKED_ATTENTION}: expected a packed row (sequence_lengths, no attention mask), got "
                         f"sequence_lengths={sequence_lengths!r} and a mask {attention_mask is not None}")
    if sliding_window is not None:
        raise NotImplementedError(f"{PACKED_ATTENTION}: sliding-window layers are not supported")
    if query.shape[0] != 1 or sum(sequence_lengths) != query.shape[2]:
        raise ValueError(f"{PACKED_ATTENTION}: expected one row of {sum(sequence_lengths)} tokens, got query "
                         f"{tuple(query.shape)}")
    lengths = list(sequence_lengths)
    outputs = [F.scaled_dot_product_attention(q, k, v, dropout_p=dropout, is_causal=True, scale=scaling,
                                              enable_gqa=True)
               for q, k, v in zip(query.split(lengths, 2), key.split(lengths, 2), value.split(lengths, 2))]
    return torch.cat(outputs, 2).transpose(1, 2).contiguous(), None


def _no_mask(*args, **kwargs) -> None:
    """The mask Transformers builds for ``packed_attention``: none, the sequence lengths say it all."""
    return None


AttentionInterface.register(PACKED_ATTENTION, packed_attention)
AttentionMaskInterface.register(PACKED_ATTENTION, _no_mask)


def use_packed_attention(lm) -> None:
    """Route every attention layer of the causal LM ``lm`` through ``packed_attention``, in place; refuses a
    model whose layers do not call Transformers' attention interface (they would attend across sequences)."""
    if not type(lm).is_backend_compatible():
        raise ValueError(f"training.attention: packed needs a model whose attention goes through Transformers' "
                         f"AttentionInterface; {type(lm).__name__} does not (use masked or causal)")
    lm.set_attn_implementation(PACKED_ATTENTION)


def decoder_inputs(batch, device) -> dict:
    """The decoder's inputs of ``batch`` (a batch of ``fpa.decoder.batch``) on
    ``device``, by keyword: a padded batch's ids and mask, or a packed row's ids, positions and lengths."""
    if batch.sequence_lengths is None:
        return {"input_ids": batch.input_ids.to(device), "attention_mask": batch.attention_mask.to(device)}
    return {"input_ids": batch.input_ids.to(device), "attention_mask": None,
            "position_ids": batch.position_ids.to(device), "sequence_lengths": batch.sequence_lengths}


@dataclass(frozen=True)
class Layout:
    """Token sequences as model inputs. input_ids, attention_mask [R, W]; ``position_ids`` [R, W] and
    ``sequence_lengths`` (tokens of each sequence, in row order) for a packed row, else None; sequence i
    begins at column ``start[i]`` of row ``row[i]``."""

    input_ids: Tensor
    attention_mask: Tensor
    position_ids: Tensor | None
    sequence_lengths: tuple[int, ...] | None
    row: tuple[int, ...]
    start: tuple[int, ...]


def lay_out(sequences: Sequence[Sequence[int]], pad_id: int, packed: bool) -> Layout:
    """``sequences`` right-padded, one a row, or ``packed`` end to end in one row without padding."""
    lengths = [len(s) for s in sequences]
    if packed:
        ids = torch.tensor([token for s in sequences for token in s]).unsqueeze(0)
        positions = torch.cat([torch.arange(n) for n in lengths]).unsqueeze(0)
        starts = torch.tensor([0, *lengths]).cumsum(0)[:-1].tolist()
        return Layout(ids, torch.ones_like(ids), positions, tuple(lengths), (0,) * len(lengths), tuple(starts))
    ids = torch.full((len(sequences), max(lengths)), pad_id, dtype=torch.long)
    attention_mask = torch.zeros_like(ids)
    for row, sequence in enumerate(sequences):
        ids[row, :len(sequence)] = torch.tensor(sequence)
        attention_mask[row, :len(sequence)] = 1
    return Layout(ids, attention_mask, None, None, tuple(range(len(sequences))), (0,) * len(sequences))
