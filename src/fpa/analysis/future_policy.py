"""Validating the future-policy approximation (paper §4, Figure "Validating the future-policy
approximation"): anchor at a snapshot θ_a of a run, extrapolate every next-token distribution
away from the reference,

    π̂_λ(·|x, y<t) = softmax((1+λ)·h_a − λ·h_ref),     h = z·Wᵀ ∈ R^V,

and measure how close it is to the policy θ_t the run actually reached later:

    KL_t(λ) = KL(π_t(·|x, y<t) ‖ π̂_λ(·|x, y<t)),  per completion token,

at the contexts (x, y<t) of completions sampled from π_t on the curve benchmark's prompts.
Summed over a completion's tokens this is an unbiased estimate of the sequence-level
KL(π_t ‖ π̂_λ) (chain rule). λ = 0 is the unmodified anchor. Full vocabulary, a chunk of
rows at a time: three [chunk, V] logits buffers, never [N, V].

Symbols and shapes: N completion tokens, d hidden size, V vocabulary, L number of λ.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch
from torch import Tensor

from fpa.analysis.hidden import completion_hidden
from fpa.reference.model import reference_head_weight
from fpa.samples.tokenize import EncodedSample


@dataclass(frozen=True)
class HeadInputs:
    """One model's final hidden states [N, d] and output head [V, d] on the same N tokens."""

    hidden: Tensor
    weight: Tensor


def future_policy_kl(target: HeadInputs, anchor: HeadInputs, reference: HeadInputs, lams: Sequence[float],
                     chunk_size: int = 1024) -> Tensor:
    """Per-token KL(π_target ‖ π̂_λ) [L, N] in float64, for each λ of ``lams`` (π̂_0 = π_anchor)."""
    n = target.hidden.shape[0]
    for name, inputs in (("target", target), ("anchor", anchor), ("reference", reference)):
        if inputs.hidden.ndim != 2 or inputs.hidden.shape[0] != n:
            raise ValueError(f"{name}.hidden: expected shape ({n}, d), got {tuple(inputs.hidden.shape)}")
        if inputs.weight.ndim != 2 or inputs.weight.shape[1] != inputs.hidden.shape[1]:
            raise ValueError(f"{name}.weight: expected shape (V, {inputs.hidden.shape[1]}), "
                             f"got {tuple(inputs.weight.shape)}")
    if len({t.weight.shape[0] for t in (target, anchor, reference)}) != 1:
        raise ValueError("target, anchor and reference heads have different vocabularies")
    if any(lam < 0 for lam in lams):
        raise ValueError(f"lams: expected numbers >= 0, got {list(lams)}")
    kl = torch.empty(len(lams), n, dtype=torch.float64)
    for start in range(0, n, chunk_size):
        rows = slice(start, start + chunk_size)
        logp = _logits(target, rows).log_softmax(-1)
        h_anchor, h_ref = _logits(anchor, rows), _logits(reference, rows)
        p = logp.exp()
        for i, lam in enumerate(lams):
            log_hat = ((1.0 + lam) * h_anchor - lam * h_ref).log_softmax(-1)
            kl[i, rows] = (p * (logp - log_hat)).sum(-1).double()
    return kl


def _logits(inputs: HeadInputs, rows: slice) -> Tensor:
    """float32 logits of a chunk of rows (float64 when the head is float64)."""
    acc = torch.float64 if inputs.weight.dtype == torch.float64 else torch.float32
    return (inputs.hidden[rows].to(inputs.weight.dtype) @ inputs.weight.t()).to(acc)


@torch.no_grad()
def measure(target_model, anchor_model, reference_model, encoded: Sequence[EncodedSample], lams: Sequence[float],
            *, batch_size: int = 16, chunk_size: int = 1024) -> dict:
    """Mean KL per token and per completion of each λ over ``encoded`` (completions of the target).

    Returns ``{"kl_per_token": [L], "kl_per_sequence": [L], "tokens": int, "sequences": int}``.
    """
    models = (target_model, anchor_model, reference_model)
    total = torch.zeros(len(lams), dtype=torch.float64)
    tokens = 0
    for start in range(0, len(encoded), batch_size):
        chunk = encoded[start : start + batch_size]
        heads = []
        for model in models:
            hidden, _, _ = completion_hidden(model, chunk)
            heads.append(HeadInputs(hidden, reference_head_weight(model)))
        total += future_policy_kl(*heads, lams, chunk_size=chunk_size).sum(-1)
        tokens += heads[0].hidden.shape[0]
    if not tokens:
        raise ValueError("no completion tokens to measure the KL on")
    return {"kl_per_token": (total / tokens).tolist(), "kl_per_sequence": (total / len(encoded)).tolist(),
            "tokens": tokens, "sequences": len(encoded)}
