"""FPA: Future Policy Approximation.

Paper Eq. (3): ∇J = E[(1/|y|) · R · sg[π̂_λ(y|x)^(1/|y|)] · ∇ log π_θ(y|x)], with
per token π̂_λ(·|x,y<t) = softmax((1+λ)·h_θ − λ·h_ref) ∝ π_θ^(1+λ)·π_ref^(−λ).
λ = 0 is exactly Off-RL: the same gradient bit for bit where the reference cache is stored in the
head's products' input precision, as the workflow stores it (``fpa.memory.training.reference_cache_dtype``;
``tests/training/test_lambda_zero.py``). ``apply_to`` restricts the π̂ weight to correct or to
incorrect samples (paper's "Cor. Only"/"Incor. Only" ablations); the other samples
keep Off-RL's weight π_θ^(1/|y|).

Shapes: all statistics are [B]; the loss is a scalar whose gradient is the
negated estimator above.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from fpa.objectives.base import Objective, SequenceStats, check_range
from fpa.objectives.offrl import sequence_weight

if TYPE_CHECKING:  # torch is imported where a loss runs: the registry loads without it
    from torch import Tensor

APPLY_TO = ("all", "correct", "incorrect")


@dataclass(frozen=True)
class FPAParams:
    lam: float = 2.0
    apply_to: str = "all"

    def __post_init__(self) -> None:
        check_range("lam", self.lam, low=0.0)
        if self.apply_to not in APPLY_TO:
            raise ValueError(f"apply_to: expected one of {list(APPLY_TO)}, got {self.apply_to!r}")


@dataclass(frozen=True)
class FPACorrectOnlyParams(FPAParams):
    apply_to: str = "correct"


@dataclass(frozen=True)
class FPAIncorrectOnlyParams(FPAParams):
    apply_to: str = "incorrect"


def fpa_loss(stats: SequenceStats, params: FPAParams) -> tuple[Tensor, dict[str, Tensor]]:
    import torch
    hat_logp = stats.require("hat_logp")
    correct = stats.reward > 0
    uses_hat = {"all": torch.ones_like(correct), "correct": correct, "incorrect": ~correct}[params.apply_to]
    weight = torch.where(uses_hat, hat_logp, stats.logp).detach()
    weight = sequence_weight(weight, stats.length)
    # 1/|y| divides log π_θ, not R·w: the backward then rounds as Off-RL's chain rule does (R·w, then / |y|),
    # and at λ = 0 (w the same bits as Off-RL's) FPA's gradient is Off-RL's bit for bit
    surrogate = stats.reward * weight * (stats.logp / stats.length)
    loss = -surrogate.mean()
    return loss, {"weight_mean": weight.mean()}


_REQUIRES = frozenset({"ref", "hat"})
OBJECTIVES = (
    Objective("fpa", FPAParams, fpa_loss, _REQUIRES, "lam", summary="FPA: Off-RL weighted by sg[π̂_λ^(1/|y|)]"),
    Objective(
        "fpa_cor", FPACorrectOnlyParams, fpa_loss, _REQUIRES, "lam",
        summary="FPA weight on correct samples only (paper ablation 'Cor. Only')",
    ),
    Objective(
        "fpa_incor", FPAIncorrectOnlyParams, fpa_loss, _REQUIRES, "lam",
        summary="FPA weight on incorrect samples only (paper ablation 'Incor. Only')",
    ),
)
