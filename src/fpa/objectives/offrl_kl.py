"""Off-RL with a forward-KL penalty (FPA paper, appendix "KL-Regularized Off-RL").

J_KL(θ) = J(θ) − τ·E_x[KL(π_ref(·|x) ‖ π_θ(·|x))],  J = E[R·π_θ(y|x)^(1/|y|)] (Eq. 1),
τ = 0.4 (paper's tuned setting). The offline samples come from π_ref, so the
sequence-level forward KL is estimated on them by Σ_t KL(π_ref(·|x,y<t) ‖ π_θ(·|x,y<t))
over completion tokens (``SequenceStats.fwd_kl``), averaged over the B samples.

Shapes: statistics [B]; the loss −J_KL is a scalar.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from fpa.objectives.base import Objective, SequenceStats, check_range
from fpa.objectives.offrl import OffRLParams, offrl_loss

if TYPE_CHECKING:  # torch is imported where a loss runs: the registry loads without it
    from torch import Tensor


@dataclass(frozen=True)
class OffRLKLParams(OffRLParams):
    tau: float = 0.4

    def __post_init__(self) -> None:
        super().__post_init__()
        check_range("tau", self.tau, low=0.0)


def offrl_kl_loss(stats: SequenceStats, params: OffRLKLParams) -> tuple[Tensor, dict[str, Tensor]]:
    policy_loss, metrics = offrl_loss(stats, params)
    kl = stats.require("fwd_kl").mean()
    return policy_loss + params.tau * kl, {**metrics, "fwd_kl": kl.detach()}


OBJECTIVES = (
    Objective(
        "offrl_kl", OffRLKLParams, offrl_kl_loss, frozenset({"fwd_kl"}),
        summary="Off-RL − τ·KL(π_ref‖π_θ) on the offline samples, τ = 0.4",
    ),
)
