"""KTO: Kahneman-Tversky Optimization (Ethayarajh et al. 2024, arXiv:2402.01306), as the paper defines it.

L_KTO = E_(x,y)[λ_y − v(x,y)],  r_θ = log π_θ(y|x) − log π_ref(y|x),
z0 = (1/|D|) Σ_(x',y')∈D r_θ(x',y'),
v = λ_w·σ(β·(r_θ − z0)) if y is correct, λ_l·σ(β·(z0 − r_θ)) if incorrect;
β = 0.05, λ_w = λ_l = 1 (paper, appendix on KTO). λ_w, λ_l are TRL's desirable/undesirable weights.

z0, the reference point, is the paper's dataset mean of r_θ, estimated at the current θ on the
whole optimizer batch (every micro-batch of every rank; ``batch_statistic``), detached: an
unbiased estimate of the dataset mean that does not change with ``micro_batch_problems`` or the
number of ranks. A mean over one micro-batch is not: with ``micro_batch_problems: 1`` it is the
mean over one problem's samples, a group-relative baseline, another method. TRL's ``KTOTrainer``
estimates z0 per micro-batch (gathered over ranks) as a KL on mismatched (x, y') pairs and clamps
it at 0, as a KL is ≥ 0; the paper's z0 is a mean log-ratio over the offline data, which is
negative where π_θ has moved away from the samples of π_ref, so it is not clamped here.

Shapes: statistics [B]; the loss is a scalar, the mean over the B samples.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from fpa.objectives.base import Objective, SequenceStats, check_range
from fpa.objectives.dpo import log_ratio

if TYPE_CHECKING:  # torch is imported where a loss runs: the registry loads without it
    from torch import Tensor


@dataclass(frozen=True)
class KTOParams:
    beta: float = 0.05
    lam_w: float = 1.0
    lam_l: float = 1.0

    def __post_init__(self) -> None:
        check_range("beta", self.beta, low=0.0, low_open=True)
        check_range("lam_w", self.lam_w, low=0.0)
        check_range("lam_l", self.lam_l, low=0.0)


def reference_point_terms(stats: SequenceStats, params: KTOParams) -> Tensor:
    """[B] r_θ per sequence, detached: z0 is their mean over the optimizer batch."""
    return log_ratio(stats).detach()


def kto_loss(stats: SequenceStats, params: KTOParams) -> tuple[Tensor, dict[str, Tensor]]:
    import torch
    ratio = log_ratio(stats)
    z0 = stats.require("batch_mean")
    correct = stats.reward > 0
    value = torch.sigmoid(params.beta * torch.where(correct, ratio - z0, z0 - ratio))
    weight = torch.where(correct, value.new_tensor(params.lam_w), value.new_tensor(params.lam_l))
    loss = (weight * (1.0 - value)).mean()
    return loss, {"z0": z0, "reward_mean": params.beta * ratio.detach().mean()}


OBJECTIVES = (
    Objective("kto", KTOParams, kto_loss, frozenset({"ref"}), batch_statistic=reference_point_terms,
              summary="KTO: prospect-theory value of r_θ vs z0, the optimizer batch's mean r_θ"),
)
