"""A*-PO, offline: Policy Optimization via Optimal Advantage Regression
(Brantley et al. 2025, arXiv:2505.20686), second stage run on the offline samples.

Stage 1, per problem x over its K offline samples (drawn from π_ref):
  V*(x) = β1·log((1/K)·Σ_i exp(r(x, y_i)/β1)).
Stage 2: L = E_(x,y)[(β2·log(π_θ(y|x)/π_ref(y|x)) − (r(x,y) − V*(x)))²].
β1 = 0.5, β2 = 1e-3 (paper). The K samples of a problem are the members of its group
in the micro-batch (micro-batches hold whole groups); V* carries no gradient.

Shapes: statistics [B]; group_value [B]; the loss is a scalar, the mean over B.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fpa.objectives.base import Objective, SequenceStats, check_range
from fpa.objectives.dpo import log_ratio

if TYPE_CHECKING:  # torch is imported where a loss runs: the registry loads without it
    from torch import Tensor


@dataclass(frozen=True)
class APOParams:
    beta1: float = 0.5
    beta2: float = 1e-3

    def __post_init__(self) -> None:
        check_range("beta1", self.beta1, low=0.0, low_open=True)
        check_range("beta2", self.beta2, low=0.0, low_open=True)


def group_value(reward: Tensor, group: Tensor, beta1: float) -> Tensor:
    """[B] V*(x) of each sample's group: β1·(logsumexp_i(r_i/β1) − log K)."""
    import torch
    member = group[None, :] == group[:, None]  # [B, B]: member[b, j] iff j is in b's group
    scaled = torch.where(member, reward[None, :] / beta1, -math.inf)
    return beta1 * (torch.logsumexp(scaled, dim=1) - member.sum(dim=1).to(reward.dtype).log())


def apo_loss(stats: SequenceStats, params: APOParams) -> tuple[Tensor, dict[str, Tensor]]:
    value = group_value(stats.reward, stats.group, params.beta1)
    advantage = stats.reward - value
    residual = params.beta2 * log_ratio(stats) - advantage
    loss = residual.square().mean()
    return loss, {"v_star_mean": value.mean(), "advantage_mean": advantage.mean()}


OBJECTIVES = (
    Objective(
        "apo", APOParams, apo_loss, frozenset({"ref"}),
        summary="A*-PO (offline): regress β2·r_θ on r − V*(x)",
    ),
)
