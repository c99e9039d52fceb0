"""Encoded samples as one batch, right-padded or packed (``fpa.training.packing``), with the positions that
predict completion tokens (the rows of the reference cache and of the policy's hidden states, in the same
order)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch
from torch import Tensor

from fpa.data.tokenize import EncodedSample
from fpa.training.packing import lay_out


@dataclass(frozen=True)
class Batch:
    """Model inputs, right-padded or packed. ``predict_mask`` [R, L] marks the positions predicting
    completion tokens; ``targets`` [N] are those tokens in row-major order of the mask,
    the same order as ``hidden[predict_mask]``; a packed row adds ``position_ids`` and
    ``sequence_lengths`` (else None)."""

    input_ids: Tensor
    attention_mask: Tensor
    predict_mask: Tensor
    targets: Tensor
    lengths: Tensor  # [B] completion tokens per sample
    position_ids: Tensor | None = None
    sequence_lengths: tuple[int, ...] | None = None


def collate(encoded: Sequence[EncodedSample], pad_id: int, packed: bool = False) -> Batch:
    layout = lay_out([e.input_ids for e in encoded], pad_id, packed)
    predict_mask = torch.zeros_like(layout.input_ids, dtype=torch.bool)
    for e, row, start in zip(encoded, layout.row, layout.start):
        predict_mask[row, start + e.prompt_len - 1 : start + len(e.input_ids) - 1] = True
    targets = torch.cat([torch.tensor(e.input_ids[e.prompt_len :]) for e in encoded])
    lengths = torch.tensor([e.completion_len for e in encoded])
    return Batch(layout.input_ids, layout.attention_mask, predict_mask, targets, lengths, layout.position_ids,
                 layout.sequence_lengths)
