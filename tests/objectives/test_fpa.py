"""FPA (paper Eq. 3) against Off-RL at λ = 0 and against its gradient written by hand."""

import pytest
import torch

from fpa.objectives import OBJECTIVES
from fpa.objectives.fpa import FPAParams

LAM = 1.7


def per_sequence_grads(lm):
    """[B, B, T, V]: ∇_θ log π_θ(y_b|x) for each sequence b."""
    logp = lm.logp(lm.h_theta)
    return torch.stack([torch.autograd.grad(logp[b], lm.h_theta, retain_graph=True)[0] for b in range(len(logp))])


def eq3_grad(lm, log_weight):
    """Gradient of the loss −J from Eq. (3): −(1/B)·Σ_b (1/|y_b|)·R_b·exp(log_weight_b/|y_b|)·∇log π_θ(y_b)."""
    coefficient = lm.reward * torch.exp(log_weight / lm.length) / lm.length
    return -(coefficient[:, None, None, None] * per_sequence_grads(lm)).sum(0) / len(lm.reward)


def test_lambda_zero_is_offrl(lm5):
    fpa_grad = lm5.grad(OBJECTIVES["fpa"].loss(lm5.stats(lam=0.0), FPAParams(lam=0.0))[0])
    offrl = OBJECTIVES["offrl"]
    offrl_grad = lm5.grad(offrl.loss(lm5.stats(), offrl.params_type())[0])
    assert lm5.relative_error(fpa_grad, offrl_grad) <= 1e-12


def test_gradient_is_eq3_and_stops_at_hat(lm5):
    params = FPAParams(lam=LAM)
    hat_logp = lm5.logp(lm5.hat_logits(lm5.h_theta, lm5.h_ref, LAM)).detach()
    expected = eq3_grad(lm5, hat_logp)
    detached = lm5.grad(OBJECTIVES["fpa"].loss(lm5.stats(lam=LAM), params)[0])
    attached = lm5.grad(OBJECTIVES["fpa"].loss(lm5.stats(lam=LAM, hat_grad=True), params)[0])
    assert lm5.relative_error(detached, expected) <= 1e-12
    assert lm5.relative_error(attached, expected) <= 1e-12  # the objective itself stops the gradient at π̂
    # Sanity: differentiating through π̂ would have given another gradient.
    hat_with_grad = lm5.logp(lm5.hat_logits(lm5.h_theta, lm5.h_ref, LAM))
    through_hat = lm5.grad(-(lm5.reward * torch.exp(hat_with_grad / lm5.length) * lm5.logp(lm5.h_theta)
                              / lm5.length).mean())
    assert lm5.relative_error(through_hat, expected) > 1e-3


def test_hat_policy_is_extrapolated_product(lm5):
    hat = torch.softmax(lm5.hat_logits(lm5.h_theta, lm5.h_ref, LAM), dim=-1)
    product = torch.softmax(lm5.h_theta, -1) ** (1 + LAM) * torch.softmax(lm5.h_ref, -1) ** (-LAM)
    torch.testing.assert_close(hat, product / product.sum(-1, keepdim=True), rtol=1e-12, atol=1e-15)
    expected_logp = (torch.log(hat).gather(-1, lm5.tokens[..., None])[..., 0] * lm5.mask).sum(-1)
    torch.testing.assert_close(lm5.stats(lam=LAM).hat_logp, expected_logp.detach(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name, hat_on_correct", [("fpa_cor", True), ("fpa_incor", False)])
def test_one_sided_weights_mix_hat_and_policy(lm5, name, hat_on_correct):
    objective = OBJECTIVES[name]
    params = objective.params_type(lam=LAM)
    hat_logp = lm5.logp(lm5.hat_logits(lm5.h_theta, lm5.h_ref, LAM)).detach()
    policy_logp = lm5.logp(lm5.h_theta).detach()
    uses_hat = (lm5.reward > 0) == hat_on_correct
    expected = eq3_grad(lm5, torch.where(uses_hat, hat_logp, policy_logp))
    actual = lm5.grad(objective.loss(lm5.stats(lam=LAM), params)[0])
    assert lm5.relative_error(actual, expected) <= 1e-12
