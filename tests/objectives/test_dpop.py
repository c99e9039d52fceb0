"""DPOP against the appendix formula, by value and by finite differences."""

import math
from dataclasses import replace

import torch

from fpa.objectives import OBJECTIVES

CHOSEN, REJECTED = torch.tensor([0, 1, 2]), torch.tensor([3, 4, 5])


def pair_stats(tiny):
    lm = tiny((1.0, 1.0, 1.0, -1.0, -1.0, -1.0), (0, 1, 2, 0, 1, 2), seed=7)
    logp = lm.logp(lm.h_theta).detach()
    # log π_ref − log π_θ: positive (penalty active) for chosen 0 and 2, negative for chosen 1.
    shift = torch.tensor([0.8, -0.6, 0.3, 0.2, -0.4, 0.1], dtype=torch.float64)
    return lm.stats(pairs=(CHOSEN, REJECTED), ref_logp=logp + shift)


def appendix_loss(stats, beta, lam):
    logp, ref = stats.logp.tolist(), stats.ref_logp.tolist()
    total = 0.0
    for w, l in zip(CHOSEN.tolist(), REJECTED.tolist()):
        logit = beta * (logp[w] - ref[w]) - beta * (logp[l] - ref[l]) - lam * max(0.0, ref[w] - logp[w])
        total += math.log1p(math.exp(-logit))  # −log σ(logit)
    return total / len(CHOSEN)


def test_value_matches_appendix(tiny):
    stats = pair_stats(tiny)
    params = OBJECTIVES["dpop"].params_type()
    assert (params.beta, params.lam_dpop) == (0.1, 50.0)
    loss, metrics = OBJECTIVES["dpop"].loss(stats, params)
    assert math.isclose(loss.item(), appendix_loss(stats, 0.1, 50.0), rel_tol=1e-12)
    assert math.isclose(metrics["penalty"].item(), (0.8 + 0.3) / 3, rel_tol=1e-12)


def test_without_penalty_is_dpo(tiny):
    stats = pair_stats(tiny)
    dpop = OBJECTIVES["dpop"].loss(stats, OBJECTIVES["dpop"].params_type(lam_dpop=0.0))[0]
    dpo = OBJECTIVES["dpo"].loss(stats, OBJECTIVES["dpo"].params_type())[0]
    torch.testing.assert_close(dpop, dpo, rtol=1e-14, atol=0)


def test_gradient_matches_finite_differences(tiny):
    stats = pair_stats(tiny)
    params = OBJECTIVES["dpop"].params_type(lam_dpop=5.0)
    logp = stats.logp.detach().requires_grad_(True)
    loss = OBJECTIVES["dpop"].loss
    assert torch.autograd.gradcheck(lambda x: loss(replace(stats, logp=x), params)[0], (logp,))
