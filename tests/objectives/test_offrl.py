"""Off-RL: SimPER's gradient (appendix proposition) and reward shaping ("w/ RS")."""

from dataclasses import replace

import torch

from fpa.objectives import OBJECTIVES
from fpa.samples.pairs import build_pairs


def simper_loss(logp, length, chosen, rejected):
    """SimPER (Xiao et al. 2025): −mean over pairs of π(y_w)^(1/|y_w|) − π(y_l)^(1/|y_l|)."""
    inverse_perplexity = torch.exp(logp / length)
    return -(inverse_perplexity[chosen] - inverse_perplexity[rejected]).mean()


def test_simper_gradient_equals_offrl(tiny):
    # Two problems with one-to-one pairs, so every sample sits in exactly one pair:
    # S_x = {y_w, y_l} as in the proposition.
    lm = tiny((1.0, -1.0, 1.0, -1.0, 1.0, -1.0), (0, 0, 1, 1, 1, 1), seed=11)
    chosen, rejected = build_pairs(lm.reward, lm.group, "matched", seed=3)
    assert sorted(torch.cat([chosen, rejected]).tolist()) == list(range(6))
    simper = lm.grad(simper_loss(lm.logp(lm.h_theta), lm.length, chosen, rejected))
    offrl = lm.grad(OBJECTIVES["offrl"].loss(lm.stats(), OBJECTIVES["offrl"].params_type())[0])
    # The appendix sums over S_x per problem; Off-RL here averages over B = 2P samples.
    assert lm.relative_error(simper, offrl * len(lm.reward) / len(chosen)) <= 1e-12


def test_reward_shaping_value_and_gradient(lm5):
    objective = OBJECTIVES["offrl_rs"]
    params = objective.params_type()
    assert params.reward_incorrect == -0.5
    shaped = torch.tensor([1.0 if r > 0 else -0.5 for r in lm5.reward.tolist()], dtype=torch.float64)
    expected = -(shaped * torch.exp(lm5.logp(lm5.h_theta) / lm5.length)).mean()
    torch.testing.assert_close(objective.loss(lm5.stats(), params)[0], expected, rtol=1e-12, atol=0)
    stats = lm5.stats()
    logp = stats.logp.detach().requires_grad_(True)
    assert torch.autograd.gradcheck(lambda x: objective.loss(replace(stats, logp=x), params)[0], (logp,))
