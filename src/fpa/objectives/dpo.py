"""DPO: Direct Preference Optimization (Rafailov et al. 2023, arXiv:2305.18290).

L_DPO = −E_(x,y_w,y_l)[log σ(β·(r_θ(y_w) − r_θ(y_l)))],  r_θ(y) = log π_θ(y|x) − log π_ref(y|x),
with sequence log-probabilities summed over completion tokens and β = 0.1 (paper).
The expectation is a mean over the P pairs built by ``fpa.samples.pairs.build_pairs``
under the rule ``pairing`` (a sample may sit in several pairs). RPO and DPOP reuse
``log_ratio``, ``pair_indices``, ``preference_margin`` and ``pair_mean``.

Shapes: statistics [B], pair indices [P]; the loss is a scalar.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from fpa.objectives.base import Objective, SequenceStats, check_range
from fpa.samples.pairs import PAIRING_RULES

if TYPE_CHECKING:  # torch is imported where a loss runs: the registry loads without it
    from torch import Tensor


@dataclass(frozen=True)
class DPOParams:
    beta: float = 0.1
    pairing: str = "all"

    def __post_init__(self) -> None:
        check_range("beta", self.beta, low=0.0, low_open=True)
        if self.pairing not in PAIRING_RULES:
            raise ValueError(f"pairing: expected one of {list(PAIRING_RULES)}, got {self.pairing!r}")


def log_ratio(stats: SequenceStats) -> Tensor:
    """[B] r_θ(y) = log π_θ(y|x) − log π_ref(y|x); gradient through log π_θ only."""
    return stats.logp - stats.require("ref_logp")


def pair_indices(stats: SequenceStats) -> tuple[Tensor, Tensor]:
    """(chosen [P], rejected [P]), checked to be 1-D."""
    chosen, rejected = stats.require("chosen"), stats.require("rejected")
    if chosen.dim() != 1:
        raise ValueError(f"SequenceStats.chosen: expected shape (P,), got {tuple(chosen.shape)}")
    return chosen, rejected


def preference_margin(stats: SequenceStats, beta: float) -> Tensor:
    """[P] β·(r_θ(y_w) − r_θ(y_l)), the DPO logit."""
    chosen, rejected = pair_indices(stats)
    ratio = log_ratio(stats)
    return beta * (ratio[chosen] - ratio[rejected])


def pair_mean(values: Tensor) -> Tensor:
    """Mean over the P pairs; 0 (graph intact) when the micro-batch holds no pair."""
    return values.sum() / max(values.numel(), 1)


def margin_metrics(margin: Tensor) -> dict[str, Tensor]:
    margin = margin.detach()
    return {"reward_margin": pair_mean(margin), "reward_accuracy": pair_mean((margin > 0).to(margin.dtype))}


def dpo_loss(stats: SequenceStats, params: DPOParams) -> tuple[Tensor, dict[str, Tensor]]:
    import torch.nn.functional as F
    margin = preference_margin(stats, params.beta)
    return pair_mean(-F.logsigmoid(margin)), margin_metrics(margin)


REQUIRES = frozenset({"ref", "pairs"})
OBJECTIVES = (
    Objective("dpo", DPOParams, dpo_loss, REQUIRES, summary="DPO: −log σ(β·(r_θ(y_w) − r_θ(y_l))), β = 0.1"),
)
