"""Encoded samples as one right-padded batch, with the positions that predict completion tokens (the
rows of the reference cache and of the policy's hidden states, in the same order)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch
from torch import Tensor

from fpa.data.tokenize import EncodedSample


@dataclass(frozen=True)
class Batch:
    """Right-padded model inputs. ``predict_mask`` [B, L] marks the positions predicting
    completion tokens; ``targets`` [N] are those tokens in row-major order of the mask,
    the same order as ``hidden[predict_mask]``."""

    input_ids: Tensor
    attention_mask: Tensor
    predict_mask: Tensor
    targets: Tensor
    lengths: Tensor  # [B] completion tokens per sample


def collate(encoded: Sequence[EncodedSample], pad_id: int) -> Batch:
    width = max(len(e.input_ids) for e in encoded)
    input_ids = torch.full((len(encoded), width), pad_id, dtype=torch.long)
    attention_mask = torch.zeros_like(input_ids)
    predict_mask = torch.zeros_like(input_ids, dtype=torch.bool)
    for row, e in enumerate(encoded):
        input_ids[row, : len(e.input_ids)] = torch.tensor(e.input_ids)
        attention_mask[row, : len(e.input_ids)] = 1
        predict_mask[row, e.prompt_len - 1 : len(e.input_ids) - 1] = True
    targets = torch.cat([torch.tensor(e.input_ids[e.prompt_len :]) for e in encoded])
    lengths = torch.tensor([e.completion_len for e in encoded])
    return Batch(input_ids, attention_mask, predict_mask, targets, lengths)
