"""RPO: Iterative Reasoning Preference Optimization (Pang et al. 2024, arXiv:2404.19733).

L_RPO = L_DPO − α·E_(x,y_w,y_l)[(1/|y_w|)·log π_θ(y_w|x)],  α = 1 (paper).

The NLL term is the paper's per-sequence form: each chosen completion's log-likelihood
divided by its own length, averaged over the same P pairs as the DPO term. TRL
(``loss_type=["sigmoid", "sft"]``, ``loss_weights=[1, α]``) instead averages over all
chosen tokens pooled across the batch, which weights long chosen completions more;
the two agree only when every chosen completion has the same length. We follow the
paper's formula, which is also how Off-RL and FPA normalise (per sequence by |y|).

Shapes: statistics [B], pair indices [P]; the loss is a scalar.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from fpa.objectives.base import Objective, SequenceStats, check_range
from fpa.objectives.dpo import REQUIRES, DPOParams, dpo_loss, pair_indices, pair_mean

if TYPE_CHECKING:  # torch is imported where a loss runs: the registry loads without it
    from torch import Tensor


@dataclass(frozen=True)
class RPOParams(DPOParams):
    alpha: float = 1.0

    def __post_init__(self) -> None:
        super().__post_init__()
        check_range("alpha", self.alpha, low=0.0)


def rpo_loss(stats: SequenceStats, params: RPOParams) -> tuple[Tensor, dict[str, Tensor]]:
    preference, metrics = dpo_loss(stats, params)
    chosen, _ = pair_indices(stats)
    nll = pair_mean(-stats.logp[chosen] / stats.length[chosen])  # −mean over pairs of log π_θ(y_w|x)/|y_w|
    return preference + params.alpha * nll, {**metrics, "dpo_loss": preference.detach(), "nll": nll.detach()}


OBJECTIVES = (
    Objective("rpo", RPOParams, rpo_loss, REQUIRES, summary="RPO: DPO + α·length-normalised NLL of y_w, α = 1"),
)
