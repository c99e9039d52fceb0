"""SFT / RFT: rejection fine-tuning on the correct samples (Yuan et al. 2023, arXiv:2308.01825).

Paper: L_SFT = −E_(x,y_w)[log π_θ(y_w|x)]. The engine keeps only correct samples
(``sample_filter="correct"``). We take the token mean pooled over the micro-batch,
L = −Σ_i log π_θ(y_i|x_i) / Σ_i |y_i|, the reduction of standard SFT code (TRL's
SFTTrainer, and the RFT paper's): the per-sequence sum would scale the gradient by
|y| (up to 2,048 tokens), out of line with the learning rates the paper shares
across methods. Every token of the micro-batch has equal weight.

Shapes: statistics [B]; the loss is a scalar.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from fpa.objectives.base import Objective, SequenceStats

if TYPE_CHECKING:  # torch is imported where a loss runs: the registry loads without it
    from torch import Tensor


@dataclass(frozen=True)
class SFTParams:
    """SFT has no hyperparameter of its own (the learning rate belongs to training)."""


def sft_loss(stats: SequenceStats, params: SFTParams) -> tuple[Tensor, dict[str, Tensor]]:
    if bool((stats.reward <= 0).any()):
        raise ValueError("sft: got incorrect samples; the engine must apply sample_filter='correct'")
    loss = -stats.logp.sum() / stats.length.sum()
    return loss, {"nll_per_token": loss.detach()}


OBJECTIVES = (
    Objective(
        "sft", SFTParams, sft_loss, sample_filter="correct",
        summary="SFT/RFT: token-mean NLL of the correct samples",
    ),
)
