"""An objective's batch-level statistic (KTO's z0): its mean over the whole optimizer batch.

An objective that declares ``batch_statistic`` gets, in ``stats.batch_mean``, the mean of those
per-sequence values over every sequence of the optimizer batch, on every rank, computed before
the step without gradient. Summed in float64 as (Σ values, count) and reduced across ranks, the
mean is the same whatever ``micro_batch_problems`` and the number of ranks are: one process with
one micro-batch computes the same number.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import torch
from torch import Tensor

from fpa.objectives.base import Objective, SequenceStats


def batch_mean(objective: Objective, params: object, own: list[SequenceStats],
               reduce_sum: Callable[[Tensor], Tensor]) -> Tensor | None:
    """[] float64 mean of ``objective.batch_statistic`` over this rank's ``own`` micro-batches'
    statistics and (through ``reduce_sum``, the cross-rank sum of a [2] tensor) every other rank's;
    None for an objective without one. Every rank calls it (the sum is collective)."""
    if objective.batch_statistic is None:
        return None
    total = torch.zeros(2, dtype=torch.float64)
    for stats in own:
        values = objective.batch_statistic(stats, params).detach()
        total += torch.stack([values.double().sum().cpu(), torch.tensor(float(values.numel()), dtype=torch.float64)])
    total = reduce_sum(total)
    return total[0] / total[1]


def with_batch_mean(stats: SequenceStats, mean: Tensor | None) -> SequenceStats:
    """``stats`` carrying ``mean`` in its own dtype and device (unchanged when ``mean`` is None)."""
    if mean is None:
        return stats
    return dataclasses.replace(stats, batch_mean=mean.to(stats.logp.device, stats.logp.dtype))
