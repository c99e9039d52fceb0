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

from fpa.decoder.batch import Sequences, collate_sequences
from fpa.samples.offline import group_by_problem
from fpa.samples.tokenize import EncodedSample, encode_record


@dataclass(frozen=True)
class Group:
    problem_index: int
    samples: tuple[int, ...]  # indices into the encoded sample list


@dataclass(kw_only=True)
class Batch(Sequences):
    """The B sequences of one micro-batch (``fpa.decoder.batch.Sequences``: padded or packed) with what the
    objectives read of each: reward [B] float; group [B] long (its ``sample_index``: indices into the dataset)."""

    reward: Tensor
    group: Tensor


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
    group_of = {i: g.problem_index for g in groups for i in g.samples}
    return Batch(**collate_sequences(encoded, pad_id, packed, indices),
                 reward=torch.tensor([float(samples[i]["reward"]) for i in indices]),
                 group=torch.tensor([group_of[i] for i in indices]))


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
