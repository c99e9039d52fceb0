"""A tiny differentiable "language model" for objective tests (float64, CPU).

The logits h_θ [B, T, V] are a leaf tensor: position t's next-token distribution is
softmax(h_θ[b, t]), whatever the prefix; h_ref [B, T, V] is fixed. Completion ``b``
is ``tokens[b, :length[b]]`` (right padding). This stands in for the engine's chunked
head, which these tests must not import.
"""

from __future__ import annotations

import pytest
import torch
from torch import Tensor

from fpa.objectives.base import SequenceStats

DTYPE = torch.float64


class TinyLM:
    """Random h_θ, h_ref, tokens and lengths for the given rewards and group ids.

    Tests reach it through the ``tiny`` and ``lm5`` fixtures (conftest modules are
    not importable reliably), so the helpers below are static methods.
    """

    @staticmethod
    def token_logp(logits: Tensor, tokens: Tensor) -> Tensor:
        """[B, T] log softmax(logits)[tokens]."""
        return torch.log_softmax(logits, dim=-1).gather(-1, tokens[..., None])[..., 0]

    @staticmethod
    def hat_logits(h_theta: Tensor, h_ref: Tensor, lam: float) -> Tensor:
        """Logits of π̂_λ: (1+λ)·h_θ − λ·h_ref."""
        return (1.0 + lam) * h_theta - lam * h_ref

    @staticmethod
    def relative_error(actual: Tensor, expected: Tensor) -> float:
        """‖actual − expected‖ / ‖expected‖."""
        return float((actual - expected).norm() / expected.norm())

    def __init__(self, reward, group, *, steps: int = 7, vocab: int = 11, seed: int = 0, lengths=None):
        generator = torch.Generator().manual_seed(seed)
        self.reward = torch.tensor(reward, dtype=DTYPE)
        self.group = torch.tensor(group, dtype=torch.long)
        batch = len(reward)
        shape = (batch, steps, vocab)
        self.h_theta = torch.randn(shape, generator=generator, dtype=DTYPE).requires_grad_(True)
        self.h_ref = self.h_theta.detach() + 0.5 * torch.randn(shape, generator=generator, dtype=DTYPE)
        self.tokens = torch.randint(vocab, (batch, steps), generator=generator)
        if lengths is None:
            lengths = torch.randint(1, steps + 1, (batch,), generator=generator)
        self.length = torch.as_tensor(lengths, dtype=DTYPE)
        self.mask = (torch.arange(steps)[None, :] < self.length[:, None]).to(DTYPE)

    def logp(self, h: Tensor) -> Tensor:
        """[B] Σ_t log softmax(h)[y_t] over completion tokens."""
        return (self.token_logp(h, self.tokens) * self.mask).sum(-1)

    def fwd_kl(self, h: Tensor) -> Tensor:
        """[B] Σ_t KL(softmax(h_ref) ‖ softmax(h)) over completion tokens."""
        log_ref, log_theta = torch.log_softmax(self.h_ref, -1), torch.log_softmax(h, -1)
        return ((log_ref.exp() * (log_ref - log_theta)).sum(-1) * self.mask).sum(-1)

    def stats(self, h: Tensor | None = None, *, lam: float | None = None, hat_grad: bool = False,
              fwd_kl: bool = False, pairs: tuple[Tensor, Tensor] | None = None,
              ref_logp: Tensor | None = None) -> SequenceStats:
        h = self.h_theta if h is None else h
        hat = None
        if lam is not None:
            hat = self.logp(self.hat_logits(h, self.h_ref, lam))
            hat = hat if hat_grad else hat.detach()
        chosen, rejected = pairs if pairs is not None else (None, None)
        return SequenceStats(
            logp=self.logp(h), length=self.length, reward=self.reward, group=self.group,
            ref_logp=self.logp(self.h_ref) if ref_logp is None else ref_logp,
            hat_logp=hat, fwd_kl=self.fwd_kl(h) if fwd_kl else None, chosen=chosen, rejected=rejected,
        )

    def grad(self, loss: Tensor) -> Tensor:
        (gradient,) = torch.autograd.grad(loss, self.h_theta)
        return gradient


@pytest.fixture
def tiny():
    """Factory: ``tiny(reward, group, seed=…)`` -> ``TinyLM``."""
    return TinyLM


#: Five samples of two problems, both groups mixed (B = 5, T = 7, V = 11).
REWARD_5 = (1.0, -1.0, 1.0, -1.0, -1.0)
GROUP_5 = (0, 0, 1, 1, 1)


@pytest.fixture
def lm5() -> TinyLM:
    return TinyLM(REWARD_5, GROUP_5, seed=5)
