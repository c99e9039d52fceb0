"""DPOP: DPO-Positive (Pal et al. 2024, "Smaug", arXiv:2402.13228).

L_DPOP = −E[log σ(β·(r_θ(y_w) − r_θ(y_l)) − λ_DPOP·max(0, log π_ref(y_w|x) − log π_θ(y_w|x)))],
β = 0.1, λ_DPOP = 50 (paper, main Qwen3-4B-Base comparison).

This is the FPA paper's appendix formula: λ_DPOP multiplies the penalty outside β.
Smaug's Eq. (3) puts it inside, β·(… − λ·max(0, …)); its λ equals ours divided by β.
The penalty is active only while π_θ(y_w|x) < π_ref(y_w|x).

Shapes: statistics [B], pair indices [P]; the loss is a scalar.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from fpa.objectives.base import Objective, SequenceStats, check_range
from fpa.objectives.dpo import (
    REQUIRES, DPOParams, log_ratio, margin_metrics, pair_indices, pair_mean, preference_margin,
)

if TYPE_CHECKING:  # torch is imported where a loss runs: the registry loads without it
    from torch import Tensor


@dataclass(frozen=True)
class DPOPParams(DPOParams):
    lam_dpop: float = 50.0

    def __post_init__(self) -> None:
        super().__post_init__()
        check_range("lam_dpop", self.lam_dpop, low=0.0)


def chosen_shortfall(stats: SequenceStats) -> Tensor:
    """[P] max(0, log π_ref(y_w|x) − log π_θ(y_w|x))."""
    chosen, _ = pair_indices(stats)
    return (-log_ratio(stats)[chosen]).clamp_min(0.0)


def dpop_loss(stats: SequenceStats, params: DPOPParams) -> tuple[Tensor, dict[str, Tensor]]:
    import torch.nn.functional as F
    margin = preference_margin(stats, params.beta)
    shortfall = chosen_shortfall(stats)
    loss = pair_mean(-F.logsigmoid(margin - params.lam_dpop * shortfall))
    return loss, {**margin_metrics(margin), "penalty": pair_mean(shortfall.detach())}


OBJECTIVES = (
    Objective(
        "dpop", DPOPParams, dpop_loss, REQUIRES,
        summary="DPOP: DPO − λ·max(0, log π_ref/π_θ(y_w)) inside the sigmoid, λ = 50",
    ),
)
