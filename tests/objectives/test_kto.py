"""KTO against the appendix formula; the TRL comparison is in test_trl_parity.py."""

import math

import pytest
import torch

from fpa.objectives import OBJECTIVES


@pytest.mark.parametrize("shift", [0.9, -0.9])  # mean log-ratio > 0 (z0 used) or < 0 (z0 clamped to 0)
def test_value_matches_appendix(lm5, shift):
    logp = lm5.logp(lm5.h_theta).detach()
    offsets = torch.tensor([0.3, -0.2, 0.1, 0.0, -0.2], dtype=torch.float64)
    stats = lm5.stats(ref_logp=logp - shift - offsets)
    params = OBJECTIVES["kto"].params_type(lam_w=1.3, lam_l=0.7)
    ratios = (stats.logp - stats.ref_logp).tolist()
    z0 = max(0.0, sum(ratios) / len(ratios))
    sigmoid = lambda v: 1 / (1 + math.exp(-v))  # noqa: E731
    expected = sum(
        1.3 * (1 - sigmoid(0.05 * (r - z0))) if reward > 0 else 0.7 * (1 - sigmoid(0.05 * (z0 - r)))
        for r, reward in zip(ratios, lm5.reward.tolist())
    ) / len(ratios)
    loss, metrics = OBJECTIVES["kto"].loss(stats, params)
    assert math.isclose(loss.item(), expected, rel_tol=1e-12)
    assert math.isclose(metrics["z0"].item(), z0, abs_tol=1e-12)


def test_reference_point_carries_no_gradient(lm5):
    stats = lm5.stats()
    params = OBJECTIVES["kto"].params_type()
    (grad,) = torch.autograd.grad(OBJECTIVES["kto"].loss(stats, params)[0], stats.logp)
    ratio = (stats.logp - stats.ref_logp).detach()
    z0 = ratio.mean().clamp_min(0)
    sign = torch.where(lm5.reward > 0, 1.0, -1.0).to(torch.float64)
    s = torch.sigmoid(0.05 * sign * (ratio - z0))
    torch.testing.assert_close(grad, -0.05 * sign * s * (1 - s) / len(ratio), rtol=1e-12, atol=1e-15)
