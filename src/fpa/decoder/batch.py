"""Encoded samples as one batch of model inputs, right-padded or packed (``fpa.decoder.packing``), with
the places of the hidden states that predict each completion token."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch
from torch import Tensor

from fpa.decoder.packing import lay_out
from fpa.samples.tokenize import EncodedSample


@dataclass
class Sequences:
    """B sequences as model inputs: input_ids, attention_mask [R, L], one sequence a row (padded) or
    all in one row (packed). Completion token n (row-major: sequence by sequence, in order) is
    ``targets[n]``, predicted by the hidden state at ``[rows[n], positions[n]]`` of sequence
    ``sequence[n]``; ``lengths`` [B] completion tokens per sequence; ``sample_index`` [B] each sequence's
    index in the encoded samples it was collated from; a packed row adds
    ``position_ids`` [1, L], restarting at each sequence, and ``sequence_lengths`` (else None)."""

    input_ids: Tensor
    attention_mask: Tensor
    rows: Tensor
    positions: Tensor
    targets: Tensor
    sequence: Tensor
    lengths: Tensor
    sample_index: Tensor
    position_ids: Tensor | None = None
    sequence_lengths: tuple[int, ...] | None = None


def collate_sequences(encoded: Sequence[EncodedSample], pad_id: int, packed: bool = False,
                      indices: Sequence[int] | None = None) -> dict:
    """The fields of ``Sequences`` for ``encoded`` (those at ``indices``, else all), by name (a caller adds
    its own: ``fpa.training.batches``)."""
    indices = range(len(encoded)) if indices is None else indices
    encoded = [encoded[i] for i in indices]
    layout = lay_out([e.input_ids for e in encoded], pad_id, packed)
    rows, positions, targets, sequence = [], [], [], []
    for number, e in enumerate(encoded):
        completion = len(e.input_ids) - e.prompt_len
        rows += [layout.row[number]] * completion
        positions += range(layout.start[number] + e.prompt_len - 1, layout.start[number] + len(e.input_ids) - 1)
        targets += e.input_ids[e.prompt_len:]
        sequence += [number] * completion
    return dict(input_ids=layout.input_ids, attention_mask=layout.attention_mask, rows=torch.tensor(rows),
                positions=torch.tensor(positions), targets=torch.tensor(targets), sequence=torch.tensor(sequence),
                lengths=torch.tensor([e.completion_len for e in encoded]), sample_index=torch.tensor(list(indices)),
                position_ids=layout.position_ids,
                sequence_lengths=layout.sequence_lengths)


def collate(encoded: Sequence[EncodedSample], pad_id: int, packed: bool = False) -> Sequences:
    return Sequences(**collate_sequences(encoded, pad_id, packed))


def completion_states(hidden: Tensor, batch: Sequences) -> Tensor:
    """[N, ...] the rows of ``hidden`` [R, L, ...] that predict ``batch``'s completion tokens, in token order."""
    return hidden[batch.rows.to(hidden.device), batch.positions.to(hidden.device)]
