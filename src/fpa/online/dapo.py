"""DAPO (Yu et al. 2025; paper appendix "RLVR Training"): clip-higher (ε_low = 0.2,
ε_high = 0.28), token-mean loss, no KL term, and dynamic sampling (groups whose G completions
all agree are dropped and the batch refilled)."""

from fpa.online.base import OnlineMethod

ONLINE_METHODS = (OnlineMethod("dapo", {"loss_type": "dapo", "epsilon": 0.2, "epsilon_high": 0.28,
                                        "dynamic_sampling_rounds": 10},
                               summary="DAPO: online, clip-higher (0.2/0.28), token-mean loss, dynamic sampling"),)
