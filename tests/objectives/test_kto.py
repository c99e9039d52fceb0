"""KTO against the appendix formula, with z0 the mean r_θ over the whole optimizer batch
(the engine's ``batch_statistic`` pass); the TRL comparison is in test_trl_parity.py."""

import dataclasses
import math

import pytest
import torch

from fpa.objectives import OBJECTIVES
from fpa.objectives.base import SequenceStats
from fpa.training.batch_statistic import batch_mean, with_batch_mean

KTO = OBJECTIVES["kto"]
REWARD_8 = (1.0, -1.0, 1.0, -1.0, -1.0, 1.0, -1.0, -1.0)
GROUP_8 = (0, 0, 1, 1, 2, 2, 3, 3)


def _rows(stats: SequenceStats, rows: slice) -> SequenceStats:
    """The micro-batch of ``stats`` made of sequences ``rows``."""
    return SequenceStats(**{f.name: None if getattr(stats, f.name) is None else getattr(stats, f.name)[rows]
                            for f in dataclasses.fields(stats)})


def _appendix(ratios, rewards, lam_w, lam_l, beta=0.05):
    """L_KTO over the samples ``ratios``: z0 their mean, λ_y − v(x, y) per sample, averaged."""
    z0 = sum(ratios) / len(ratios)
    sigmoid = lambda v: 1 / (1 + math.exp(-v))  # noqa: E731
    return z0, [lam_w * (1 - sigmoid(beta * (r - z0))) if reward > 0 else lam_l * (1 - sigmoid(beta * (z0 - r)))
                for r, reward in zip(ratios, rewards)]


@pytest.mark.parametrize("shift", [0.9, -0.9])  # the dataset's mean log-ratio above and below 0: never clamped
@pytest.mark.parametrize("split", [[slice(0, 8)], [slice(0, 4), slice(4, 8)], [slice(0, 2), slice(2, 8)]])
def test_loss_matches_appendix_whatever_the_micro_batches(tiny, shift, split):
    lm = tiny(REWARD_8, GROUP_8, seed=8)
    logp = lm.logp(lm.h_theta).detach()
    offsets = torch.linspace(-0.4, 0.3, 8, dtype=torch.float64)
    stats = lm.stats(ref_logp=logp - shift - offsets)
    params = KTO.params_type(lam_w=1.3, lam_l=0.7)
    ratios = (stats.logp - stats.ref_logp).tolist()
    z0, terms = _appendix(ratios, REWARD_8, 1.3, 0.7)
    micro = [_rows(stats, rows) for rows in split]
    mean = batch_mean(KTO, params, micro, reduce_sum=lambda total: total)
    assert math.isclose(mean.item(), z0, rel_tol=1e-13) and (z0 > 0) == (shift > 0)
    for rows, part in zip(split, micro):
        loss, metrics = KTO.loss(with_batch_mean(part, mean), params)
        assert math.isclose(loss.item(), sum(terms[rows]) / len(terms[rows]), rel_tol=1e-12)
        assert metrics["z0"].item() == mean.item()


def test_ranks_sum_into_one_mean(tiny):
    """Two ranks' (Σ r_θ, count) summed give the mean over both ranks' sequences."""
    lm = tiny(REWARD_8, GROUP_8, seed=9)
    stats = lm.stats()
    params = KTO.params_type()
    first, second = _rows(stats, slice(0, 3)), _rows(stats, slice(3, 8))
    other = batch_mean(KTO, params, [second], reduce_sum=lambda total: total) * 5  # rank 1's Σ, count 5
    mean = batch_mean(KTO, params, [first], reduce_sum=lambda total: total + torch.stack(
        [other, torch.tensor(5.0, dtype=torch.float64)]))
    assert math.isclose(mean.item(), (stats.logp - stats.ref_logp).mean().item(), rel_tol=1e-13)


def test_reference_point_carries_no_gradient(lm5):
    stats = lm5.stats()
    params = KTO.params_type()
    mean = batch_mean(KTO, params, [stats], reduce_sum=lambda total: total)
    (grad,) = torch.autograd.grad(KTO.loss(with_batch_mean(stats, mean), params)[0], stats.logp)
    ratio = (stats.logp - stats.ref_logp).detach()
    sign = torch.where(lm5.reward > 0, 1.0, -1.0).to(torch.float64)
    s = torch.sigmoid(0.05 * sign * (ratio - ratio.mean()))
    torch.testing.assert_close(grad, -0.05 * sign * s * (1 - s) / len(ratio), rtol=1e-12, atol=1e-15)


def test_loss_without_the_batch_pass_is_named():
    stats = SequenceStats(logp=torch.zeros(2), length=torch.ones(2), reward=torch.ones(2),
                          group=torch.zeros(2, dtype=torch.long), ref_logp=torch.zeros(2))
    with pytest.raises(ValueError, match="batch_mean is missing"):
        KTO.loss(stats, KTO.params_type())
