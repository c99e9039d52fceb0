"""Offline A*-PO against the appendix formulas for V*(x) and the regression loss."""

import math
from dataclasses import replace

import torch

from fpa.objectives import OBJECTIVES
from fpa.objectives.apo import group_value

# Interleaved, non-contiguous group ids; groups of 3 and 4, plus a singleton.
REWARD = (1.0, -1.0, -1.0, 1.0, 1.0, -1.0, 1.0, -1.0)
GROUP = (3, 7, 3, 7, 3, 7, 7, 9)


def hand_value(beta1):
    value = {}
    for g in set(GROUP):
        rewards = [r for r, h in zip(REWARD, GROUP) if h == g]
        value[g] = beta1 * math.log(sum(math.exp(r / beta1) for r in rewards) / len(rewards))
    return [value[g] for g in GROUP]


def test_group_value_is_soft_max_of_rewards():
    reward, group = torch.tensor(REWARD, dtype=torch.float64), torch.tensor(GROUP)
    expected = torch.tensor(hand_value(0.5), dtype=torch.float64)
    torch.testing.assert_close(group_value(reward, group, 0.5), expected, rtol=1e-12, atol=1e-14)
    assert group_value(reward, group, 0.5)[-1].item() == -1.0  # one sample: V* = its reward


def test_loss_value_matches_appendix(tiny):
    stats = tiny(REWARD, GROUP, seed=4).stats()
    params = OBJECTIVES["apo"].params_type()
    assert (params.beta1, params.beta2) == (0.5, 1e-3)
    value = hand_value(0.5)
    logp, ref = stats.logp.tolist(), stats.ref_logp.tolist()
    expected = sum((1e-3 * (lp - rf) - (r - v)) ** 2 for lp, rf, r, v in zip(logp, ref, REWARD, value)) / len(REWARD)
    assert math.isclose(OBJECTIVES["apo"].loss(stats, params)[0].item(), expected, rel_tol=1e-12)


def test_gradient_matches_finite_differences(tiny):
    stats = tiny(REWARD, GROUP, seed=4).stats()
    params = OBJECTIVES["apo"].params_type(beta2=0.3)
    logp = stats.logp.detach().requires_grad_(True)
    loss = OBJECTIVES["apo"].loss
    assert torch.autograd.gradcheck(lambda x: loss(replace(stats, logp=x), params)[0], (logp,))
