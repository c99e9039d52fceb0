"""KTO: Kahneman-Tversky Optimization (Ethayarajh et al. 2024, arXiv:2402.01306).

L_KTO = E_(x,y)[λ_y − v(x,y)],  r_θ = log π_θ(y|x) − log π_ref(y|x),
v = λ_w·σ(β·(r_θ − z0)) if y is correct, λ_l·σ(β·(z0 − r_θ)) if incorrect;
β = 0.05, λ_w = λ_l = 1 (paper). λ_w, λ_l are TRL's desirable/undesirable weights.

z0, the reference point: the mean of r_θ over the micro-batch, detached and clamped
at 0, as TRL's ``KTOTrainer`` does with its batch KL estimate. TRL averages r_θ over
mismatched (x, y') pairs made by shifting completions within the batch; we average
over the batch's own (x, y) samples, which needs no extra forward pass.

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


def kto_loss(stats: SequenceStats, params: KTOParams) -> tuple[Tensor, dict[str, Tensor]]:
    import torch
    ratio = log_ratio(stats)
    z0 = ratio.detach().mean().clamp_min(0.0)
    correct = stats.reward > 0
    value = torch.sigmoid(params.beta * torch.where(correct, ratio - z0, z0 - ratio))
    weight = torch.where(correct, value.new_tensor(params.lam_w), value.new_tensor(params.lam_l))
    loss = (weight * (1.0 - value)).mean()
    return loss, {"z0": z0, "reward_mean": params.beta * ratio.detach().mean()}


OBJECTIVES = (
    Objective("kto", KTOParams, kto_loss, frozenset({"ref"}), summary="KTO: prospect-theory value of r_θ vs batch z0"),
)
