"""Samples → problem groups → deterministic batches → padded or packed tensors.

A batch is a set of whole problem groups (all kept samples of each problem), so
group-level quantities (preference pairs, A*-PO's V*(x), KTO's batch z0) never see
half a group. The order of groups in epoch ``e`` is a pure function of
``(seed, e)``: a resumed run replays exactly the batches it would have seen.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from fpa.data.offline import group_by_problem
from fpa.data.tokenize import EncodedSample, encode_record
from fpa.training.packing import lay_out


@dataclass(frozen=True)
class Group:
    problem_index: int
    samples: tuple[int, ...]  # indices into the encoded sample list


@dataclass
class Batch:
    """The B sequences of one micro-batch, right-padded (one a row) or packed (one row, ``fpa.training.packing``).

    input_ids, attention_mask: [R, L]; rows: [N] row of input_ids of each completion token;
    positions: [N] position in that row of the hidden state predicting it; targets: [N] token ids;
    sequence: [N] the sequence (0..B-1) of each completion token; sample_index: [B] indices into the
    dataset; reward, length: [B] float; group: [B] long; packed only: position_ids [1, L], restarting at
    each sequence, and sequence_lengths, the tokens of each sequence (else None).
    """

    input_ids: Tensor
    attention_mask: Tensor
    rows: Tensor
    positions: Tensor
    targets: Tensor
    sequence: Tensor
    sample_index: Tensor
    reward: Tensor
    length: Tensor
    group: Tensor
    position_ids: Tensor | None = None
    sequence_lengths: tuple[int, ...] | None = None


def encode_dataset(tokenizer, samples: list[dict], max_length: int) -> list[EncodedSample]:
    return [encode_record(tokenizer, s, max_length) for s in samples]


def make_groups(samples: list[dict]) -> list[Group]:
    index_of = {id(sample): i for i, sample in enumerate(samples)}
    groups = group_by_problem(samples)
    return [Group(n, tuple(index_of[id(s)] for s in groups[pid])) for n, pid in enumerate(sorted(groups))]


def steps_per_epoch(n_groups: int, batch_problems: int) -> int:
    return math.ceil(n_groups / batch_problems)


def global_batch(groups: list[Group], step: int, *, batch_problems: int, seed: int) -> list[Group]:
    """The groups of optimizer step ``step`` (0-based, counting across epochs)."""
    per_epoch = steps_per_epoch(len(groups), batch_problems)
    epoch, position = divmod(step, per_epoch)
    order = torch.randperm(len(groups), generator=torch.Generator().manual_seed(seed * 1000 + epoch)).tolist()
    chosen = order[position * batch_problems:(position + 1) * batch_problems]
    return [groups[i] for i in chosen]


def shard(items: list, rank: int, world: int) -> list:
    """Contiguous shard ``rank`` of ``world``: ranks together see the same micro-batches as one process."""
    bounds = [round(i * len(items) / world) for i in range(world + 1)]
    return items[bounds[rank]:bounds[rank + 1]]


def micro_batches(groups: list[Group], micro_batch_problems: int) -> list[list[Group]]:
    return [groups[i:i + micro_batch_problems] for i in range(0, len(groups), micro_batch_problems)]


def sample_indices(groups: list[Group]) -> list[int]:
    """The samples of ``groups`` in batch order: the rows of their collated batch."""
    return [i for g in groups for i in g.samples]


def collate(groups: list[Group], encoded: list[EncodedSample], samples: list[dict], pad_id: int,
            packed: bool = False) -> Batch:
    indices = sample_indices(groups)
    layout = lay_out([encoded[i].input_ids for i in indices], pad_id, packed)
    rows, positions, targets, sequence = [], [], [], []
    for number, i in enumerate(indices):
        ids, prompt = encoded[i].input_ids, encoded[i].prompt_len
        rows += [layout.row[number]] * (len(ids) - prompt)
        positions += range(layout.start[number] + prompt - 1, layout.start[number] + len(ids) - 1)
        targets += ids[prompt:]
        sequence += [number] * (len(ids) - prompt)
    group_of = {i: g.problem_index for g in groups for i in g.samples}
    return Batch(
        input_ids=layout.input_ids,
        attention_mask=layout.attention_mask,
        rows=torch.tensor(rows),
        positions=torch.tensor(positions),
        targets=torch.tensor(targets),
        sequence=torch.tensor(sequence),
        sample_index=torch.tensor(indices),
        reward=torch.tensor([float(samples[i]["reward"]) for i in indices]),
        length=torch.tensor([float(encoded[i].completion_len) for i in indices]),
        group=torch.tensor([group_of[i] for i in indices]),
        position_ids=layout.position_ids,
        sequence_lengths=layout.sequence_lengths,
    )


def rank_micro_batches(groups: list[Group], rank: int, world: int,
                       micro_batch_problems: int) -> tuple[list[list[Group]], int, int]:
    """Rank ``rank``'s micro-batches of ``groups``, padded to as many as any rank has; returns
    (micro-batches, how many of them are its own, all ranks' own micro-batches together).

    Every rank must run the same number of forwards: DDP and FSDP synchronise inside them.
    A rank with fewer (uneven shards, an epoch's short last batch) repeats the first
    micro-batch of a rank that has one; the caller gives the copies zero weight.
    """
    shards = [micro_batches(shard(groups, r, world), micro_batch_problems) for r in range(world)]
    own = shards[rank]
    padding = max(map(len, shards)) - len(own)
    filler = [next(s for s in shards if s)[0]] * padding if padding else []
    return own + filler, len(own), sum(map(len, shards))
