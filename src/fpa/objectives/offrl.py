"""Off-RL: offline REINFORCE on the length-normalised sequence probability.

Paper Eq. (1): J(θ) = E[R · π_θ(y|x)^(1/|y|)], with R = +1 correct, −1 incorrect
(the FPA paper cites it as Lu et al. 2026, "PCL"; SimPER is its pairwise special case).
Reward shaping ("w/ RS") replaces R = −1 of incorrect samples by ``reward_incorrect``.

Shapes: all statistics are [B]; the loss is a scalar.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from fpa.objectives.base import Objective, SequenceStats, check_range

if TYPE_CHECKING:  # torch is imported where a loss runs: the registry loads without it
    from torch import Tensor


@dataclass(frozen=True)
class OffRLParams:
    reward_incorrect: float = -1.0

    def __post_init__(self) -> None:
        check_range("reward_incorrect", self.reward_incorrect, high=0.0)


@dataclass(frozen=True)
class RewardShapedParams(OffRLParams):
    reward_incorrect: float = -0.5


def shaped_reward(stats: SequenceStats, reward_incorrect: float) -> Tensor:
    """[B] R with incorrect samples' reward replaced by ``reward_incorrect``."""
    import torch
    return torch.where(stats.reward > 0, stats.reward, torch.full_like(stats.reward, reward_incorrect))


def sequence_weight(logp: Tensor, length: Tensor) -> Tensor:
    """[B] π(y|x)^(1/|y|) = exp(log π(y|x) / |y|)."""
    import torch
    return torch.exp(logp / length)


def offrl_loss(stats: SequenceStats, params: OffRLParams) -> tuple[Tensor, dict[str, Tensor]]:
    reward = shaped_reward(stats, params.reward_incorrect)
    weight = sequence_weight(stats.logp, stats.length)
    loss = -(reward * weight).mean()
    return loss, {"objective": -loss.detach()}


OBJECTIVES = (
    Objective("offrl", OffRLParams, offrl_loss, summary="Off-RL: maximise E[R·π_θ(y|x)^(1/|y|)]"),
    Objective(
        "offrl_rs", RewardShapedParams, offrl_loss,
        summary="Off-RL with reward shaping: R_incorrect = -0.5 (paper 'w/ RS')",
    ),
)
