"""GRPO (Shao et al. 2024; paper appendix "RLVR Training"): group-normalised advantages,
symmetric clip ε = 0.2, each completion's token-mean averaged over the group, no KL term."""

from fpa.online.base import OnlineMethod

ONLINE_METHODS = (OnlineMethod("grpo", {"loss_type": "grpo", "epsilon": 0.2, "epsilon_high": 0.2},
                               summary="GRPO: online, group-normalised advantages, clipped ratio (ε = 0.2), "
                                       "sequence-mean loss"),)
