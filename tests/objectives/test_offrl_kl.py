"""Off-RL − τ·forward KL (appendix "KL-Regularized Off-RL")."""

import itertools
from dataclasses import replace

import torch

from fpa.objectives import OBJECTIVES


def test_value_is_offrl_plus_tau_kl(lm5):
    params = OBJECTIVES["offrl_kl"].params_type()
    assert params.tau == 0.4
    offrl = OBJECTIVES["offrl"].loss(lm5.stats(), OBJECTIVES["offrl"].params_type())[0]
    expected = offrl + 0.4 * lm5.fwd_kl(lm5.h_theta).mean()
    loss, metrics = OBJECTIVES["offrl_kl"].loss(lm5.stats(fwd_kl=True), params)
    torch.testing.assert_close(loss, expected, rtol=1e-12, atol=0)
    assert not metrics["fwd_kl"].requires_grad


def test_gradient_matches_finite_differences(lm5):
    params = OBJECTIVES["offrl_kl"].params_type(tau=2.0)
    loss = OBJECTIVES["offrl_kl"].loss
    stats = lm5.stats(fwd_kl=True)
    inputs = (stats.logp.detach().requires_grad_(True), stats.fwd_kl.detach().requires_grad_(True))
    assert torch.autograd.gradcheck(lambda logp, kl: loss(replace(stats, logp=logp, fwd_kl=kl), params)[0], inputs)


def test_token_sum_is_the_sequence_forward_kl(tiny):
    # KL(π_ref(·|x) ‖ π_θ(·|x)) over whole sequences = E_{y~π_ref}[log π_ref(y) − log π_θ(y)],
    # enumerated over all 3^3 sequences; equals SequenceStats.fwd_kl's Σ_t of token KLs.
    lm = tiny((1.0,), (0,), steps=3, vocab=3, seed=2, lengths=(3,))
    log_ref, log_theta = torch.log_softmax(lm.h_ref[0], -1), torch.log_softmax(lm.h_theta[0].detach(), -1)
    total = torch.zeros((), dtype=torch.float64)
    for y in itertools.product(range(3), repeat=3):
        ref = sum(log_ref[t, y_t] for t, y_t in enumerate(y))
        theta = sum(log_theta[t, y_t] for t, y_t in enumerate(y))
        total = total + ref.exp() * (ref - theta)
    torch.testing.assert_close(lm.fwd_kl(lm.h_theta.detach())[0], total, rtol=1e-12, atol=1e-14)
